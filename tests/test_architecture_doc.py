"""docs/architecture.md is checked against the code: every module path,
dotted name, class, function and setting it names in backticks exists; it
names every module of the packages a newcomer reads first (the turn's
phases, chat's services, retrieval's search); its beat table is the beat
schedule (daneshyar/config/background.py), its queues the queues and their
routes; its "Who writes which table" is what a scan of the source finds
(tests/table_writers.py says what the scan counts); the entrances of a turn
are the callers of ``turn_prepare``; the layer diagrams are the import-linter
contracts; and the request flow's middleware are ``MIDDLEWARE``'s."""

from __future__ import annotations

import ast
import importlib
import re
import tomllib
from functools import cache

from django.conf import settings

from chat.services import turn
from daneshyar.config import background
from tests import table_writers
from tests.project import PACKAGES, ROOT

DOC = ROOT / "docs" / "architecture.md"
# Packages whose every module the document names by its path.
LISTED = ("chat/services/turn", "chat/services", "retrieval/search", "resources/ingestion")

CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
PATH = re.compile(r"^[\w.-]+(/[\w.-]+)*(\.(py|js|md|toml|yml|html|css|json)|/)$")
DOTTED = re.compile(r"^[a-z_]+(\.[A-Za-z_]\w*)+$")
# A class (two humps at least), a function or field (an underscore), or a
# setting (capitals with an underscore).
NAME = re.compile(r"^([A-Z][a-z0-9]+[A-Z]\w*|[a-z][a-z0-9]*_[a-z0-9_]+|[A-Z][A-Z0-9]*_[A-Z0-9_]+)$")


def spans(text: str) -> list[str]:
    """The document's inline code, without fenced blocks; ``name()`` as ``name``."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return [span.removesuffix("()") for span in CODE_SPAN.findall(prose)]


@cache
def defined_names() -> frozenset[str]:
    """Every class, function and assigned name in the project's source, and
    its string constants of those shapes (error codes, Celery task names)."""
    names: set[str] = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(node.name)
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    names.add(node.id)
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    names.add(node.target.id)
                elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _named(node.value):
                    names.add(node.value)
    return frozenset(names)


def _named(text: str) -> bool:
    return bool(NAME.match(text) or DOTTED.match(text))


def resolves(dotted: str) -> bool:
    """``a.b.c``: a module, or an attribute of the longest importable module."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def missing(text: str) -> list[str]:
    """What the document names that the code does not have."""
    absent = []
    for span in spans(text):
        if PATH.match(span) and "/" in span:
            if not (ROOT / span).exists():
                absent.append(span)
        elif PATH.match(span):
            if not any((ROOT / package).rglob(span) for package in PACKAGES):
                absent.append(span)
        elif DOTTED.match(span) and span.split(".")[0] in (*PACKAGES, "django", "rest_framework", "celery"):
            if not (resolves(span) or span in defined_names()):
                absent.append(span)
        elif NAME.match(span) and span not in defined_names():
            absent.append(span)
    return absent


def test_everything_the_architecture_names_exists() -> None:
    assert missing(DOC.read_text()) == []


def test_a_name_the_code_lacks_is_found() -> None:
    text = "Turns start in `chat/services/turn/begin.py` (`turn_begin`, `TurnBag`,"
    text += " `chat.services.turn.nothing`)."
    assert missing(text) == [
        "chat/services/turn/begin.py",
        "turn_begin",
        "TurnBag",
        "chat.services.turn.nothing",
    ]


def test_every_module_of_the_first_read_packages_is_named() -> None:
    text = DOC.read_text()
    unnamed = [
        str(path.relative_to(ROOT))
        for folder in LISTED
        for path in sorted((ROOT / folder).glob("*.py"))
        if path.name != "__init__.py" and str(path.relative_to(ROOT)) not in text
    ]
    assert unnamed == []


BACKGROUND = ROOT / "daneshyar" / "config" / "background.py"
TASK = re.compile(rf"^(?:{'|'.join(PACKAGES)})\.\w+$")


def table_after(text: str, marker: str) -> list[list[str]]:
    """The rows (cells, stripped) of the first Markdown table after ``marker``."""
    rows: list[list[str]] = []
    for line in text.split(marker, 1)[1].splitlines()[1:]:
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            break
    # The header (unless the marker is it) and the rule under it.
    return rows[1 if marker.startswith("|") else 2 :]


def test_the_beat_table_is_the_beat_schedule() -> None:
    """Each task of CELERY_BEAT_SCHEDULE is a row, and its "every" is the
    schedule's: the setting it is read from with its default, or the seconds
    the schedule writes (an hour: 3600)."""
    defaults: dict[str, int] = {}
    for path in (ROOT / "daneshyar" / "config").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "env_int":
                name, default = (a.value if isinstance(a, ast.Constant) else None for a in node.args[:2])
                if isinstance(name, str) and isinstance(default, int):
                    defaults[name] = default
    every: dict[str, str] = {}
    for node in ast.walk(ast.parse(BACKGROUND.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "_every":
            task, interval = node.args
            assert isinstance(task, ast.Constant) and isinstance(task.value, str)
            if isinstance(interval, ast.Name):
                every[task.value] = f"`{interval.id}` ({defaults[interval.id]} s)"
            else:
                assert isinstance(interval, ast.Constant) and isinstance(interval.value, int)
                every[task.value] = "hour" if interval.value == 3600 else f"{interval.value} s"
    scheduled = {entry["task"] for entry in background.CELERY_BEAT_SCHEDULE.values()}
    assert set(every) == scheduled
    rows = table_after(DOC.read_text(), "The beat schedule (`CELERY_BEAT_SCHEDULE`)")
    assert {row[0].strip("`"): row[1] for row in rows} == every


def test_the_processes_are_the_queues_and_their_routes() -> None:
    """A row of the processes' table per queue, naming its setting and the
    tasks routed to it (CELERY_TASK_ROUTES); the maintenance queue is the
    default one and takes the beat's sweeps."""
    queues = {
        name: getattr(background, name)
        for name in dir(background)
        if name.endswith("_QUEUE") and name != "CELERY_TASK_DEFAULT_QUEUE"
    }
    routed: dict[str, set[str]] = {name: set() for name in queues}
    by_queue = {queue: name for name, queue in queues.items()}
    for task, route in background.CELERY_TASK_ROUTES.items():
        routed[by_queue[route["queue"]]].add(task)
    named: dict[str, set[str]] = {}
    default = []
    for row in table_after(DOC.read_text(), "| process | runs |"):
        found = re.findall(r"\(`(\w+_QUEUE)`", row[1])
        if found:
            (setting,) = found
            named[setting] = {span for span in CODE_SPAN.findall(row[1]) if TASK.match(span)}
            if "also the default one" in row[1]:
                default.append(setting)
    assert named == routed
    assert [queues[name] for name in default] == [background.CELERY_TASK_DEFAULT_QUEUE]


def test_the_writers_of_each_table_are_the_ones_the_source_has() -> None:
    rows = table_after(DOC.read_text(), "| table | written by |")
    documented = {row[0].strip("`"): frozenset(CODE_SPAN.findall(row[1])) for row in rows}
    writers, unbound = table_writers.scan(PACKAGES)
    assert unbound == ()
    assert documented == writers


def test_a_module_writes_only_its_own_apps_tables() -> None:
    """Every writer the scan finds is a module of the app the table belongs
    to (``chat.transcripts`` and ``workspaces.webhooks`` are packages of
    their apps)."""
    writers, _ = table_writers.scan(PACKAGES)
    models = table_writers.project_models(PACKAGES)
    foreign = {
        (name, module)
        for name, modules in writers.items()
        for module in modules
        if module.split("/")[0] != models[name]._meta.app_label
    }
    assert foreign == set()


def test_the_entrances_of_a_turn_are_the_callers_of_turn_prepare() -> None:
    """ "A turn, in phases" names every module that calls ``turn_prepare``
    (outside the turn's own package), and no other."""
    callers = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "chat/services/turn" in str(path):
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "turn_prepare":
                    callers.add(str(path.relative_to(ROOT)))
    paragraph = DOC.read_text().split("entrances take a turn:", 1)[1].split("and calls", 1)[0]
    assert {span for span in CODE_SPAN.findall(paragraph) if PATH.match(span)} == callers


def test_the_layers_drawn_are_the_contracts() -> None:
    """The layer diagrams of chat and evaluations are their import-linter
    contracts (pyproject.toml), layer by layer."""
    linter = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contracts = {contract["id"]: contract.get("layers") for contract in linter["contracts"]}
    text = DOC.read_text()
    for contract in ("chat-layers", "evaluations-layers"):
        block = text.rsplit(f"contract `{contract}`", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
        drawn = [re.split(r"\s{2,}", line.strip())[0] for line in block.splitlines() if line.strip()]
        assert drawn == contracts[contract], contract


def test_the_scan_finds_each_kind_of_write() -> None:
    source = """
from psycopg import sql

STATEMENT = "UPDATE retrieval_passage SET language = %s"


def rename(resource: Resource) -> None:
    resource.save()


def empty(workspace: Workspace) -> None:
    old = Session.objects.filter(workspace=workspace)
    old.delete()
    SourcePage.objects.filter(source__workspace=workspace).update(gone=True)
    sql.SQL("DELETE FROM {t} WHERE id = %s").format(t=table(Feedback))


def unknown(thing) -> None:
    thing.save()
    Organization.objects.filter(pk=1).exists()
"""
    known = table_writers.project_models(PACKAGES)
    written, unbound = table_writers.module_writes(source, known, {}, {})
    assert written == {"Passage", "Resource", "Session", "SourcePage", "Feedback"}
    assert unbound == [19]


def test_the_request_flow_names_the_projects_middleware_in_order() -> None:
    """Step 1 of "Request flow (chat)" names the project's own middleware
    of ``MIDDLEWARE`` (not Django's nor a library's), in their order."""
    own = [path.rsplit(".", 1)[1] for path in settings.MIDDLEWARE if path.split(".", 1)[0] in PACKAGES]
    step = DOC.read_text().split("## Request flow (chat)", 1)[1].split("\n2. ", 1)[0]
    assert [span for span in CODE_SPAN.findall(step) if span.endswith("Middleware")] == own


def test_the_names_the_turn_package_re_exports_are_its() -> None:
    sentence = DOC.read_text().split("`chat/services/turn/__init__.py` re-exports", 1)[1].split("…", 1)[0]
    named = CODE_SPAN.findall(sentence)
    assert named
    assert set(named) <= set(turn.__all__)
