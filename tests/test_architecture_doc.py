"""docs/architecture.md is checked against the code: every module path,
dotted name, class, function and setting it names in backticks exists, and
it names every module of the packages a newcomer reads first (the turn's
phases, chat's services, retrieval's search)."""

from __future__ import annotations

import ast
import importlib
import re
from functools import cache

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
