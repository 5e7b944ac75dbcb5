"""Where the project is and its packages, for the tests that read its source
(the import layers, module sizes, docs/architecture.md)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The project's own packages: the import contracts' root packages.
PACKAGES: tuple[str, ...] = tuple(
    tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["root_packages"]
)


def python_run(code: str, env: dict[str, str], *, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``code`` run by a Python process of its own from the project's root,
    with ``env`` as its whole environment (what it prints, captured)."""
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
