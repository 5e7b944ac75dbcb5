"""The import rule of docs/architecture.md, checked with import-linter (its
contracts are in pyproject.toml) on the real source tree, and shown to fail
when a back-edge is added to a copy of it."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from tests.project import PACKAGES, ROOT

LINT_IMPORTS = str(Path(sys.executable).parent / "lint-imports")


def _lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", "pyproject.toml"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _copy_tree(target: Path) -> Path:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, target / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", target / "pyproject.toml")
    return target


def test_the_source_tree_keeps_every_import_contract() -> None:
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def _broken_by(tree: Path, module: str, line: str) -> str:
    """lint-imports' report on a copy of the source tree in which ``module``
    (a path) also holds ``line``: a contract it must break."""
    _copy_tree(tree)
    path = tree / module
    path.write_text(path.read_text() + f"\n{line}  # noqa: E402,F401\n")
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert "BROKEN" in result.stdout
    return result.stdout


@pytest.mark.parametrize(
    ("module", "back_edge", "reported"),
    [
        pytest.param(
            "resources/services.py",
            "from chat.models import Session",
            ["resources.services -> chat.models"],
            id="resources-to-chat",
        ),
        # Resources call retrieval only from ingestion.
        pytest.param(
            "resources/selectors.py",
            "from retrieval.models import Passage",
            ["resources.selectors -> retrieval.models"],
            id="resources-to-retrieval",
        ),
        # The project package imports no app.
        pytest.param(
            "daneshyar/health.py",
            "from retrieval import embeddings",
            ["daneshyar.health -> retrieval.embeddings"],
            id="project-to-app",
        ),
        # languages sits above daneshyar in the layers, but imports it no more than an app.
        pytest.param(
            "languages/detect.py",
            "from daneshyar import env",
            ["languages.detect -> daneshyar.env"],
            id="languages-to-project",
        ),
        # The conversation never imports the transcript wing.
        pytest.param(
            "chat/services/turn/store.py",
            "from chat.transcripts import export",
            ["chat.services.turn.store -> chat.transcripts.export"],
            id="conversation-to-transcripts",
        ),
        # Chat deletes the messages an evaluation kept words of; the
        # database's cascade, not an import, deletes what was built from them.
        pytest.param(
            "chat/transcripts/retention.py",
            "from evaluations.models import EvaluationResult",
            ["chat.transcripts.retention -> evaluations.models"],
            id="chat-to-evaluations",
        ),
        # Inside evaluations, the tables import no run.
        pytest.param(
            "evaluations/models.py",
            "from evaluations import runs",
            ["evaluations.models -> evaluations.runs"],
            id="evaluation-tables-to-runs",
        ),
        pytest.param(
            "chat/contract.py",
            "from chat.services import sessions",
            [
                "chat.contract is not allowed to import chat.services",
                "chat.contract -> chat.services.sessions",
            ],
            id="chat-contract-to-services",
        ),
    ],
)
def test_a_back_edge_breaks_its_contract(
    tmp_path: Path, module: str, back_edge: str, reported: list[str]
) -> None:
    report = _broken_by(tmp_path, module, back_edge)
    for line in reported:
        assert line in report


@pytest.mark.parametrize(
    ("module", "back_edge"),
    [
        ("sessions", "from chat.services.questions import StoredQuestion"),
        ("messages", "from chat.services.questions import question_store"),
        ("sessions", "from chat.services.messages import reply_store"),
    ],
)
def test_the_writer_of_messages_and_the_session_service_import_no_question_service(
    tmp_path: Path, module: str, back_edge: str
) -> None:
    """The circle between storing a question and storing a reply stays gone."""
    report = _broken_by(tmp_path, f"chat/services/{module}.py", back_edge)
    assert f"chat.services.{module} -> chat.services." in report


def test_a_chat_module_without_a_layer_breaks_the_chat_layers(tmp_path: Path) -> None:
    tree = _copy_tree(tmp_path)
    (tree / "chat" / "shortcuts.py").write_text("from __future__ import annotations\n")
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert "chat.shortcuts" in result.stdout


def test_upload_services_and_ingestion_tasks_import_one_way() -> None:
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    # services enqueue through tasks; tasks run the ingestion; nothing leads back.
    assert graph.chain_exists(importer="resources.services", imported="resources.tasks")
    assert not graph.chain_exists(importer="resources.tasks", imported="resources.services")
    assert not graph.chain_exists(importer="resources.ingestion", imported="resources.tasks")
    # The only module of resources that reaches retrieval directly.
    importers = {
        importer
        for module in graph.find_descendants("retrieval") | {"retrieval"}
        for importer in graph.find_modules_that_directly_import(module)
        if importer.split(".")[0] == "resources"
    }
    assert importers == {"resources.ingestion.write"}


def import_cycles(graph: grimp.ImportGraph) -> set[tuple[str, str]]:
    """Pairs of modules that import each other, directly or through others
    (type-only imports included). A package and its own submodules are not a
    cycle: ``__init__`` re-exports them."""
    cycles = set()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            related = module.startswith(imported + ".") or imported.startswith(module + ".")
            if imported != module and not related and graph.chain_exists(importer=imported, imported=module):
                cycles.add((min(module, imported), max(module, imported)))
    return cycles


def test_no_two_modules_import_each_other() -> None:
    assert import_cycles(grimp.build_graph(*PACKAGES, cache_dir=None)) == set()


def test_a_type_only_import_back_is_a_cycle(tmp_path: Path) -> None:
    tree = _copy_tree(tmp_path)
    keys = tree / "workspaces" / "keys.py"
    keys.write_text(
        keys.read_text()
        + "\nfrom typing import TYPE_CHECKING  # noqa: E402\n"
        + "if TYPE_CHECKING:\n    from workspaces.access import WorkspaceApi  # noqa: F401\n"
    )
    # In a process of its own: this one has the real tree's modules imported.
    code = (
        "import grimp; from tests.test_architecture import PACKAGES, import_cycles; "
        "print(sorted(import_cycles(grimp.build_graph(*PACKAGES, cache_dir=None))))"
    )
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{ROOT}"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "'workspaces.access', 'workspaces.keys'" in result.stdout


def private_names_imported(root: Path) -> list[str]:
    """Every place a module of the project takes a private (``_name``) name
    from another module of the project: ``from m import _x`` or ``m._x``.
    Django's documented ``_meta`` is public API."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text())
            imported: set[str] = set()
            where = path.relative_to(root)
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in PACKAGES:
                    for alias in node.names:
                        if _private(alias.name):
                            found.append(f"{where}:{node.lineno}: from {node.module} import {alias.name}")
                        imported.add(alias.asname or alias.name)
                elif isinstance(node, ast.Import):
                    names = [alias for alias in node.names if alias.name.split(".")[0] in PACKAGES]
                    imported |= {(alias.asname or alias.name).split(".")[0] for alias in names}
            found += [
                f"{where}:{node.lineno}: {node.value.id}.{node.attr}"
                for node in ast.walk(tree)
                if isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in imported
                and _private(node.attr)
                and node.attr != "_meta"
            ]
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_module_takes_a_private_name_of_another() -> None:
    assert private_names_imported(ROOT) == []


def test_a_private_name_taken_from_a_sibling_is_found(tmp_path: Path) -> None:
    tree = _copy_tree(tmp_path)
    word = tree / "resources" / "parsing" / "word.py"
    taken = "\nfrom resources.parsing import detect  # noqa: E402\nX = detect._OLE_MAGIC\n"
    word.write_text(word.read_text() + taken)
    new = set(private_names_imported(tree)) - set(private_names_imported(ROOT))
    assert [place.split(": ")[1] for place in new] == ["detect._OLE_MAGIC"]
