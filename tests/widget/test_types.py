"""The widget's ``// @ts-check`` is checked: TypeScript's tsc reads its JSDoc
types (``--checkJs``) with the browser's library, as an editor does for
that comment; nothing is emitted, the file is served as written."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.widget.typescript import pinned_version, typescript

ROOT = Path(__file__).resolve().parents[2]
WIDGET = ROOT / "widget" / "static" / "daneshyar" / "chat.js"


def tsc(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            "node",
            str(typescript() / "bin" / "tsc"),
            "--checkJs",
            "--allowJs",
            "--noEmit",
            "--target",
            "es2022",
            "--lib",
            "es2022,dom,dom.iterable",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_widget_type_checks() -> None:
    result = tsc(WIDGET)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_check_finds_a_type_error(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.js"
    wrong.write_text(
        '// @ts-check\n/** @param {number} n */\nfunction twice(n) { return 2 * n; }\ntwice("2");\n'
    )
    result = tsc(wrong)
    assert result.returncode != 0 and "TS2345" in result.stdout


def test_the_pinned_version_is_the_one_installed() -> None:
    installed = json.loads((typescript() / "package.json").read_text())["version"]
    assert installed == pinned_version()
