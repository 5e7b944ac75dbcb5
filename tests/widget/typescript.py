"""TypeScript from the npm registry, for the widget's type check and size
rules: scripts/test installs the version it pins into .data/node."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.parts import part_missing

ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / ".data" / "node" / "node_modules" / "typescript"
FUNCTIONS = Path(__file__).resolve().parent / "functions.mjs"


def pinned_version() -> str:
    """The version scripts/test installs."""
    match = re.search(r"^TYPESCRIPT_VERSION=(\S+)$", (ROOT / "scripts" / "test").read_text(), re.MULTILINE)
    assert match, "scripts/test pins no TYPESCRIPT_VERSION"
    return match[1]


def typescript() -> Path:
    """The installed module (fails under CI when missing, else skips)."""
    if shutil.which("node") is None or not (MODULE / "package.json").exists():
        part_missing(
            f"TypeScript is not installed: scripts/test installs it "
            f"(npm install --prefix .data/node typescript@{pinned_version()})"
        )
    return MODULE


def functions(path: Path) -> list[dict[str, Any]]:
    """The functions of a JavaScript file, as TypeScript's parser finds them:
    ``name``, ``line``, ``lines``, ``parameters`` and ``wrapper`` (the one
    function around the whole file that keeps its names private)."""
    result = subprocess.run(
        ["node", str(FUNCTIONS), str(typescript()), str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    found: list[dict[str, Any]] = json.loads(result.stdout)
    return found
