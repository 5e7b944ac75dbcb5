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

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    "daneshyar",
    "languages",
    "workspaces",
    "resources",
    "retrieval",
    "chat",
    "evaluations",
    "console",
    "widget",
)
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


def test_a_back_edge_from_resources_to_chat_breaks_the_layers_contract(tmp_path: Path) -> None:
    tree = _copy_tree(tmp_path)
    services = tree / "resources" / "services.py"
    services.write_text(services.read_text() + "\nfrom chat.models import Session  # noqa: E402,F401\n")
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert "BROKEN" in result.stdout
    assert "resources.services -> chat.models" in result.stdout


def test_resources_may_call_retrieval_only_from_ingestion(tmp_path: Path) -> None:
    tree = _copy_tree(tmp_path)
    selectors = tree / "resources" / "selectors.py"
    back_edge = "\nfrom retrieval.models import Passage  # noqa: E402,F401\n"
    selectors.write_text(selectors.read_text() + back_edge)
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert "resources.selectors -> retrieval.models" in result.stdout


def test_the_project_package_imports_no_app(tmp_path: Path) -> None:
    tree = _copy_tree(tmp_path)
    health = tree / "daneshyar" / "health.py"
    health.write_text(health.read_text() + "\nfrom retrieval import embeddings  # noqa: E402,F401\n")
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert "daneshyar.health -> retrieval.embeddings" in result.stdout


def test_language_data_imports_no_other_package_of_the_project(tmp_path: Path) -> None:
    """languages sits above daneshyar in the layers, but imports it no more than an app."""
    tree = _copy_tree(tmp_path)
    detect = tree / "languages" / "detect.py"
    detect.write_text(detect.read_text() + "\nfrom daneshyar import env  # noqa: E402,F401\n")
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert "languages.detect -> daneshyar.env" in result.stdout


def test_the_conversation_never_imports_the_transcript_wing(tmp_path: Path) -> None:
    tree = _copy_tree(tmp_path)
    store = tree / "chat" / "services" / "turn" / "store.py"
    store.write_text(store.read_text() + "\nfrom chat.transcripts import export  # noqa: E402,F401\n")
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert "chat.services.turn.store -> chat.transcripts.export" in result.stdout


def test_chat_never_imports_the_evaluation_app(tmp_path: Path) -> None:
    """Chat deletes the messages an evaluation kept words of; the database's
    cascade, not an import, deletes what was built from them."""
    tree = _copy_tree(tmp_path)
    retention = tree / "chat" / "transcripts" / "retention.py"
    back_edge = "\nfrom evaluations.models import EvaluationResult  # noqa: E402,F401\n"
    retention.write_text(retention.read_text() + back_edge)
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert "chat.transcripts.retention -> evaluations.models" in result.stdout


def test_inside_evaluations_the_tables_import_no_run(tmp_path: Path) -> None:
    tree = _copy_tree(tmp_path)
    models = tree / "evaluations" / "models.py"
    models.write_text(models.read_text() + "\nfrom evaluations import runs  # noqa: E402,F401\n")
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert "evaluations.models -> evaluations.runs" in result.stdout


def test_a_back_edge_from_the_chat_contract_breaks_the_chat_layers(tmp_path: Path) -> None:
    tree = _copy_tree(tmp_path)
    contract = tree / "chat" / "contract.py"
    contract.write_text(contract.read_text() + "\nfrom chat.services import sessions  # noqa: E402,F401\n")
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert "chat.contract is not allowed to import chat.services" in result.stdout
    assert "chat.contract -> chat.services.sessions" in result.stdout


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
    tree = _copy_tree(tmp_path)
    path = tree / "chat" / "services" / f"{module}.py"
    path.write_text(path.read_text() + f"\n{back_edge}  # noqa: E402,F401\n")
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert f"chat.services.{module} -> chat.services." in result.stdout


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
