"""The documentation's code blocks, read and run (docs/README.md, "The examples
run": the convention this module implements).

Every fenced block of README.md and docs/*.md is one of:

- **run**: ``bash``/``sh``/``shell``/``console`` with bash (a ``console``
  block runs its ``$ `` lines; the rest is output), ``python`` with the
  project's Python, ``js``/``javascript``/``mjs`` with Node as an ES module;
- **data**: a language in ``DATA_LANGUAGES`` (JSON bodies, transcripts,
  configuration, markup): shown, never run;
- **marked**: ``<!-- not-run: reason -->`` on the line before the fence.

A block that is none of these (an untagged fence, an unknown language) is an
error. Blocks of one document run in order, in one ``DocSession``: bash keeps
its variables and functions from block to block (everything assigned is
exported), Python keeps one namespace, and every block sees what the bash
blocks exported as its environment. ``<!-- prints: text -->`` before a fence
also requires the block's output to contain that text.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN_LANGUAGES = {
    "bash": "bash",
    "sh": "bash",
    "shell": "bash",
    "console": "bash",
    "python": "python",
    "py": "python",
    "js": "node",
    "javascript": "node",
    "mjs": "node",
}
DATA_LANGUAGES = frozenset(
    {"text", "json", "ndjson", "http", "yaml", "toml", "ini", "dotenv", "html", "nginx", "csv"}
)
BLOCK_TIMEOUT = 300.0

FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<lang>[^\s`]*)")
MARKER = re.compile(r"^\s*<!--\s*(?P<kind>not-run|prints):\s*(?P<text>.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    not_run: str | None = None
    prints: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        path = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{path}:{self.line}"

    @property
    def runner(self) -> str | None:
        """``bash``, ``python`` or ``node``; None for data and marked blocks."""
        if self.not_run is not None or self.language in DATA_LANGUAGES:
            return None
        return RUN_LANGUAGES.get(self.language)

    @property
    def problem(self) -> str | None:
        """Why the block is neither run, data nor marked; None when it is fine."""
        if self.not_run == "":
            return f"{self.where}: a not-run marker needs a reason"
        if self.not_run is None and self.language not in DATA_LANGUAGES and self.runner is None:
            shown = self.language or "no language"
            return (
                f"{self.where}: a ```{shown} block is neither run nor data; give it a language "
                "(docs/README.md) or put <!-- not-run: reason --> on the line before it"
            )
        return None


def documents() -> list[Path]:
    """README.md and every Markdown file under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _markers(lines: list[str], fence_index: int) -> tuple[str | None, tuple[str, ...]]:
    """The marker comments on the lines right above a fence."""
    not_run: str | None = None
    prints: list[str] = []
    index = fence_index - 1
    while index >= 0 and (match := MARKER.match(lines[index])):
        if match["kind"] == "not-run":
            not_run = match["text"]
        else:
            prints.append(match["text"])
        index -= 1
    return not_run, tuple(reversed(prints))


def blocks(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        fence = opening["fence"]
        end = index + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        body = textwrap.dedent("\n".join(lines[index + 1 : end])) + "\n"
        not_run, prints = _markers(lines, index)
        found.append(Block(path, index + 1, opening["lang"].lower(), body, not_run, prints))
        index = end + 1
    return found


LIST_ITEM = re.compile(r"^\s*([-*+]|\d+[.)])\s")


def indented_blocks(path: Path) -> list[int]:
    """Lines that open an indented (unfenced) code block: four spaces after a
    blank line that follows an unindented paragraph, outside fences and
    lists. Such a block has no language, so it could not be run: use a fence."""
    found: list[int] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    in_fence = False
    previous = ""  # the last non-blank line
    for index, line in enumerate(lines):
        if FENCE.match(line):
            in_fence = not in_fence
        elif (
            not in_fence
            and line.startswith("    ")
            and line.strip()
            and index > 0
            and not lines[index - 1].strip()
            and previous
            and not previous.startswith((" ", "\t"))
            and not LIST_ITEM.match(previous)
        ):
            found.append(index + 1)
        if line.strip():
            previous = line
    return found


def console_commands(code: str) -> str:
    """A console transcript's commands (``$ `` lines and their ``\\`` continuations)."""
    commands: list[str] = []
    continuing = False
    for line in code.splitlines():
        if line.startswith("$ ") or continuing:
            command = line[2:] if line.startswith("$ ") and not continuing else line
            commands.append(command)
            continuing = command.endswith("\\")
    return "\n".join(commands) + "\n"


class BlockFailed(AssertionError):
    pass


# Python blocks run in one long-lived interpreter per document: it reads one
# JSON request per line ({"code", "name", "env"}), runs the code in the
# document's namespace and answers {"ok", "error"} on the protocol pipe.
# Whatever the code prints goes to the output file, as Node's and bash's does.
PYTHON_DRIVER = r"""
import json, os, sys, traceback
protocol = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
namespace = {"__name__": "__main__"}
for request in sys.stdin:
    request = json.loads(request)
    os.environ.clear()
    os.environ.update(request["env"])
    try:
        exec(compile(request["code"], request["name"], "exec"), namespace)
        answer = {"ok": True, "error": ""}
    except BaseException:
        answer = {"ok": False, "error": traceback.format_exc()}
    sys.stdout.flush()
    sys.stderr.flush()
    protocol.write(json.dumps(answer) + "\n")
    protocol.flush()
"""

# Every variable a bash block assigns is exported (set -a), so that the next
# block, and the Python and Node blocks after it, see it.
BASH_EPILOGUE = """
set +e +a
{ export -p | grep -vE '^declare -x (OLDPWD|PWD|SHLVL|_)='; declare -f; } > "$DOC_STATE"
env -0 > "$DOC_ENV"
"""


class DocSession:
    """One document's examples, run in order in ``workdir``."""

    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.workdir = workdir
        self.env = dict(env)
        self.state = workdir / ".doc-state.sh"
        self.state.write_text("")
        self.output = workdir / ".doc-output.log"
        self._python: subprocess.Popen[str] | None = None
        self.skipped: list[str] = []

    def run(self, block: Block) -> str:
        """Run one block; its output (stdout and stderr). Raises BlockFailed."""
        start = self.output.stat().st_size if self.output.exists() else 0
        runner = block.runner
        if runner == "bash":
            self._bash(block)
        elif runner == "python":
            self._run_python(block)
        elif runner == "node":
            self._node(block)
        text = self.output.read_bytes()[start:].decode(errors="replace")
        for expected in block.prints:
            if expected not in text:
                raise BlockFailed(f"{block.where}: the output lacks {expected!r}:\n{text[-4000:]}")
        return text

    def _fail(self, block: Block, why: str, start: int) -> BlockFailed:
        text = self.output.read_bytes()[start:].decode(errors="replace")
        return BlockFailed(
            f"{block.where} ({block.language}) {why}:\n{text[-6000:]}\n--- the block:\n{block.code}"
        )

    def _spawn(self, block: Block, command: list[str]) -> None:
        start = self.output.stat().st_size if self.output.exists() else 0
        with self.output.open("ab") as log:
            try:
                result = subprocess.run(
                    command,
                    cwd=self.workdir,
                    env=self.env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    timeout=BLOCK_TIMEOUT,
                    check=False,
                )
            except subprocess.TimeoutExpired as error:
                raise self._fail(block, f"ran past {BLOCK_TIMEOUT:.0f}s", start) from error
        if result.returncode != 0:
            raise self._fail(block, f"exited with {result.returncode}", start)

    def _bash(self, block: Block) -> None:
        code = console_commands(block.code) if block.language == "console" else block.code
        script = self.workdir / f".block-{block.line}.sh"
        script.write_text(f'set -a\nsource "$DOC_STATE"\nset -eo pipefail\n{code}\n{BASH_EPILOGUE}')
        env_file = self.workdir / ".doc-env"
        self.env.update(DOC_STATE=str(self.state), DOC_ENV=str(env_file))
        self._spawn(block, ["bash", str(script)])
        pairs = (item.split("=", 1) for item in env_file.read_text().split("\0") if "=" in item)
        self.env = {name: value for name, value in pairs if name not in {"OLDPWD", "SHLVL", "_"}}

    def _node(self, block: Block) -> None:
        if shutil.which("node") is None and os.environ.get("CI") != "true":
            self.skipped.append(block.where)  # the test reports it; under CI node is required
            return
        module = self.workdir / f"block-{block.line}.mjs"
        module.write_text(block.code)
        self._spawn(block, ["node", str(module)])

    def _run_python(self, block: Block) -> None:
        start = self.output.stat().st_size if self.output.exists() else 0
        if self._python is None:
            with self.output.open("ab") as log:
                self._python = subprocess.Popen(
                    [sys.executable, "-u", "-c", PYTHON_DRIVER],
                    cwd=self.workdir,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    text=True,
                )
        process = self._python
        assert process.stdin is not None and process.stdout is not None
        request = {"code": block.code, "name": block.where, "env": self.env}
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        ready, _, _ = select.select([process.stdout], [], [], BLOCK_TIMEOUT)
        if not ready:
            self.close()
            raise self._fail(block, f"ran past {BLOCK_TIMEOUT:.0f}s", start)
        line = process.stdout.readline()
        if not line:
            self.close()
            raise self._fail(block, "ended the interpreter", start)
        answer = json.loads(line)
        if not answer["ok"]:
            with self.output.open("a") as log:
                log.write(answer["error"])
            raise self._fail(block, "raised", start)

    def close(self) -> None:
        if self._python is not None:
            if self._python.stdin is not None:
                self._python.stdin.close()
            try:
                self._python.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._python.kill()
                self._python.wait()
            self._python = None


def scratch(workdir: Path) -> None:
    """A working directory for a document's examples with the repository's
    top-level entries linked in, so that ``.venv/bin/python manage.py …`` and
    ``scripts/…`` work as from the repository root, while the files the
    examples write stay out of the repository."""
    for entry in ROOT.iterdir():
        if entry.name not in {".git", ".data"} and not (workdir / entry.name).exists():
            (workdir / entry.name).symlink_to(entry)
    os.makedirs(workdir, exist_ok=True)
