"""The documentation's examples run (docs/README.md, "The examples run").

Every code block of README.md and docs/*.md is run, data, or marked as not
run (tests/doc_examples.py). The runnable ones run here in order, one
document at a time, against a real server (gunicorn, the extractive engine)
and a real Celery worker on the test database, so that uploads become ready:
``BASE``, ``KEY`` (an admin key of a fresh organization) and ``WS`` (its
workspace) come from the environment, as a reader sets them from what
``make run`` prints.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection
from pytest_django import DjangoDbBlocker

from resources.models import Resource, ResourceStatus
from tests.conftest import make_tenant
from tests.doc_examples import (
    ROOT,
    Block,
    BlockFailed,
    DocSession,
    blocks,
    console_commands,
    documents,
    indented_blocks,
    scratch,
)
from tests.live import server_errors
from tests.parts import part_missing
from tests.worker import all_queues, purge_queue, stop_process, worker_process

RUNNABLE = [path for path in documents() if any(block.runner for block in blocks(path))]


def test_every_code_block_runs_or_is_data_or_is_marked() -> None:
    problems = [block.problem for path in documents() for block in blocks(path) if block.problem]
    assert not problems, "\n".join(problems)


def test_no_example_is_an_indented_code_block() -> None:
    found = [f"{path.relative_to(ROOT)}:{line}" for path in documents() for line in indented_blocks(path)]
    assert not found, f"indented code blocks (use a fenced block with a language): {found}"


def test_the_checker_refuses_an_untagged_block(tmp_path: Path) -> None:
    page = tmp_path / "unmarked.md"
    page.write_text(
        "An example:\n\n```\ncurl $BASE/models/\n```\n\n<!-- not-run: -->\n```sh\nmake run\n```\n"
    )
    found = blocks(page)
    assert [block.problem is not None for block in found] == [True, True]
    assert "neither run nor data" in str(found[0].problem)
    assert "needs a reason" in str(found[1].problem)


def test_blocks_read_their_language_markers_and_indentation(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        '- a list item:\n\n  ```json\n  {"a": 1}\n  ```\n\n'
        "<!-- prints: 2 -->\n<!-- prints: 3 -->\n~~~python\nprint(2, 3)\n~~~\n\n"
        "<!-- not-run: starts a server -->\n```sh\nmake run\n```\n"
        "```console\n$ echo one \\\n  two\none two\n$ echo three\nthree\n```\n"
    )
    data, python, marked, console = blocks(page)
    assert (data.language, data.runner, data.code, data.line) == ("json", None, '{"a": 1}\n', 3)
    assert (python.runner, python.prints, python.code) == ("python", ("2", "3"), "print(2, 3)\n")
    assert (marked.runner, marked.not_run, marked.problem) == (None, "starts a server", None)
    assert console.runner == "bash"
    assert console_commands(console.code) == "echo one \\\n  two\necho three\n"


def test_an_indented_code_block_is_found_but_not_a_list_continuation(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("Run this:\n\n    make run\n\n- item\n\n    more of the item\n")
    assert indented_blocks(page) == [3]


def test_the_readme_states_languages_and_key_scopes() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    languages = readme[readme.index("**Languages.**") : readme.index("## Two commands")]
    for name in (
        "English",
        "Persian",
        "Arabic",
        "German",
        "French",
        "multilingual-e5-small",
        "EMBEDDING_BACKEND=onnx",
    ):
        assert name in languages
    assert '"Languages, measured"' in languages
    assert "**Key scopes.**" in readme and "--workspace" in readme
    assert readme.index("docs/quickstart.md") < readme.index("docs/api.md")


def test_every_runner_is_installed() -> None:
    """Node runs the JavaScript examples, bash with curl and jq the shell
    ones: scripts/test installs Debian's nodejs, jq and curl when missing.
    Elsewhere a missing one skips (the JavaScript examples are then not run);
    under CI it fails."""
    missing = [program for program in ("bash", "node", "jq", "curl") if shutil.which(program) is None]
    if missing:
        part_missing(f"not installed: {missing} (apt-get install nodejs jq curl)")


def test_the_docs_stand_on_their_own() -> None:
    """The contract is in the repository: no doc sends a reader to a file a clone lacks."""
    for path in documents():
        text = path.read_text(encoding="utf-8")
        assert "../shared/spec" not in text, f"{path.name} refers to ../shared/spec"
        assert "../shared/reference" not in text, f"{path.name} refers to ../shared/reference"


@pytest.fixture(scope="module")
def doc_worker(django_db_setup: None, django_db_blocker: DjangoDbBlocker) -> Iterator[None]:
    """A real Celery worker process on the test database, for the whole module."""
    with django_db_blocker.unblock():
        purge_queue()
        process = worker_process("--pool", "solo", "--concurrency", "1", "-Q", ",".join(all_queues()))
        try:
            yield
        finally:
            stop_process(process)
            purge_queue()
            connection.close()


def doc_environment(live_server_real: str) -> dict[str, str]:
    tenant = make_tenant("Docs")
    params = connection.get_connection_params()
    name = connection.settings_dict["NAME"]
    return {
        **os.environ,
        "BASE": f"{live_server_real}/api/v1",
        "KEY": tenant.admin_key,
        "WS": str(tenant.workspace.id),
        # manage.py in the examples works on the server's database.
        "DATABASE_URL": f"postgresql://postgres@/{name}?host={params['host']}",
        "DATABASE_CONN_MAX_AGE": "0",
    }


def run_document(path: Path, workdir: Path, env: dict[str, str]) -> list[tuple[Block, str]]:
    scratch(workdir)
    session = DocSession(workdir, env)
    ran: list[tuple[Block, str]] = []
    try:
        for block in blocks(path):
            if block.runner:
                ran.append((block, session.run(block)))
    finally:
        session.close()
    if session.skipped:
        part_missing(f"node is not installed: the JavaScript examples at {session.skipped} did not run")
    return ran


@pytest.mark.slow
@pytest.mark.parametrize("path", RUNNABLE, ids=[str(p.relative_to(ROOT)) for p in RUNNABLE])
def test_documented_examples_run(
    path: Path, transactional_db: None, live_server_real: str, doc_worker: None, tmp_path: Path
) -> None:
    try:
        ran = run_document(path, tmp_path, doc_environment(live_server_real))
    except BlockFailed as failed:
        raise BlockFailed(
            f"{failed}\n--- the server's errors:\n{server_errors(live_server_real)}"
        ) from failed
    assert ran, f"{path.name} has no example to run"
    # An example may upload without waiting: let the worker finish before the
    # database is emptied for the next document.
    deadline = time.monotonic() + 120
    while Resource.objects.filter(status__in=[ResourceStatus.PENDING, ResourceStatus.PROCESSING]).exists():
        assert time.monotonic() < deadline, "the examples' uploads did not finish ingesting"
        time.sleep(0.2)


@pytest.mark.slow
def test_a_broken_example_fails(transactional_db: None, live_server_real: str, tmp_path: Path) -> None:
    """The runner is not lenient: a failing command, a Python exception, a
    Node error, and a missing expected output each fail their block."""
    page = tmp_path / "broken.md"
    page.write_text(
        '```bash\nexport SEEN=1\ncurl -sf "$BASE/models/" -H "X-API-Key: $KEY" >/dev/null\n```\n'
        "```python\nimport os\nassert os.environ['SEEN'] == '1'\n```\n"
        '```bash\ncurl -sf "$BASE/no-such-path/" -H "X-API-Key: $KEY"\n```\n'
        "```python\nraise SystemExit(3)\n```\n"
        "```js\nthrow new Error('broken example');\n```\n"
        "<!-- prints: never printed -->\n```bash\necho hello\n```\n"
    )
    env = doc_environment(live_server_real)
    workdir = tmp_path / "work"
    workdir.mkdir()
    scratch(workdir)
    session = DocSession(workdir, env)
    found = blocks(page)
    try:
        session.run(found[0])
        session.run(found[1])
        for block, why in zip(found[2:], ["exited with 22", "raised", "exited with 1", "lacks"], strict=True):
            with pytest.raises(BlockFailed, match=why):
                session.run(block)
    finally:
        session.close()
