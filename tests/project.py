"""Where the project is and its packages, for the tests that read its source
(the import layers, module sizes, docs/architecture.md)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The project's own packages, the layers' root packages (pyproject.toml).
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
