"""The size rules of the source: no module over 400 lines, no function over
60 lines (``def`` line to the end of its body, decorators excluded), no
function with more than 8 parameters. Ruff holds complexity, argument and
statement counts (pyproject.toml, [tool.ruff.lint]) but has no rule for a
function's length in lines, so this walks the source with ``ast``.
Migrations are generated code and stay out; tests and bench are not walked.

The widget (``widget/static/daneshyar/chat.js``, one file served as written)
has rules of its own, measured with TypeScript's parser
(tests/widget/typescript.py): at most 1,000 lines and 44,000 bytes (838 and
36,137 when the rule was set: a fifth more room for a file every page loads
whole; its gzipped size has its own limit in tests/widget/), no function
over 50 lines (the longest, the element's DOM, was 47: about one screen) or
over 8 parameters. The function around the whole file, its private scope, is
the module, not a function."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.project import PACKAGES, ROOT
from tests.widget.typescript import functions

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
MAX_PARAMETERS = 8


def _source_files(root: Path) -> Iterator[Path]:
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" not in path.relative_to(root).parts:
                yield path


def _parameter_count(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Named parameters, keyword-only ones included; ``*args``/``**kwargs``
    are not counted (as ruff's PLR0913), nor a method's ``self``/``cls``."""
    arguments = function.args
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return len(names)


def size_violations(root: Path) -> list[str]:
    """Every breach of the size rules under ``root``, as ``file:line: what``."""
    violations: list[tuple[str, int, str]] = []
    for path in _source_files(root):
        name = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            violations.append((name, 1, f"module has {lines} lines (> {MAX_MODULE_LINES})"))
        for node in ast.walk(ast.parse(text, filename=name)):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            # ``lineno`` is the ``def`` line: decorators are not counted.
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                violations.append(
                    (name, node.lineno, f"{node.name} has {length} lines (> {MAX_FUNCTION_LINES})")
                )
            parameters = _parameter_count(node)
            if parameters > MAX_PARAMETERS:
                violations.append(
                    (name, node.lineno, f"{node.name} has {parameters} parameters (> {MAX_PARAMETERS})")
                )
    return [f"{name}:{line}: {what}" for name, line, what in sorted(violations)]


def test_the_source_keeps_the_size_rules() -> None:
    violations = size_violations(ROOT)
    assert not violations, "size rules broken:\n" + "\n".join(violations)


def test_the_walk_finds_each_kind_of_breach(tmp_path: Path) -> None:
    package = tmp_path / "chat"
    package.mkdir()
    parameters = ", ".join(f"p{i}" for i in range(9))
    body = "".join(f"    x{i} = {i}\n" for i in range(60))
    (package / "big.py").write_text(
        f"@decorator\ndef long():\n{body}\n"
        f"def wide(*, {parameters}):\n    pass\n\n"
        f"class A:\n    def method(self, {', '.join(f'q{i}' for i in range(8))}):\n        pass\n"
        + "\n"
        * 400
    )
    migrations = package / "migrations"
    migrations.mkdir()
    (migrations / "0001_initial.py").write_text("\n" * 500)

    assert size_violations(tmp_path) == [
        "chat/big.py:1: module has 469 lines (> 400)",
        "chat/big.py:2: long has 61 lines (> 60)",
        "chat/big.py:64: wide has 9 parameters (> 8)",
    ]


WIDGET = ROOT / "widget" / "static" / "daneshyar" / "chat.js"
WIDGET_MAX_LINES = 1000
WIDGET_MAX_BYTES = 44_000
WIDGET_MAX_FUNCTION_LINES = 50


def widget_violations(path: Path) -> list[str]:
    """Every breach of the widget's size rules, as ``line: what``."""
    violations: list[str] = []
    lines = len(path.read_text(encoding="utf-8").splitlines())
    if lines > WIDGET_MAX_LINES:
        violations.append(f"1: the file has {lines} lines (> {WIDGET_MAX_LINES})")
    size = path.stat().st_size
    if size > WIDGET_MAX_BYTES:
        violations.append(f"1: the file has {size} bytes (> {WIDGET_MAX_BYTES})")
    for function in functions(path):
        if function["wrapper"]:
            continue
        if function["lines"] > WIDGET_MAX_FUNCTION_LINES:
            what = f"{function['name']} has {function['lines']} lines (> {WIDGET_MAX_FUNCTION_LINES})"
            violations.append(f"{function['line']}: {what}")
        if function["parameters"] > MAX_PARAMETERS:
            what = f"{function['name']} has {function['parameters']} parameters (> {MAX_PARAMETERS})"
            violations.append(f"{function['line']}: {what}")
    return violations


def test_the_widget_keeps_its_size_rules() -> None:
    violations = widget_violations(WIDGET)
    assert not violations, "chat.js size rules broken:\n" + "\n".join(violations)


def test_the_widget_walk_finds_each_kind_of_breach(tmp_path: Path) -> None:
    body = "".join(f"    const x{i} = {i};\n" for i in range(50))
    parameters = ", ".join(f"p{i}" for i in range(9))
    script = tmp_path / "big.js"
    script.write_text(
        "(() => {\n"
        f"  function long() {{\n{body}  }}\n"
        f"  const wide = ({parameters}) => p0;\n"
        "  class A { method(a) { return a; } }\n"
        "})();\n" + "// padding\n" * 1000 + "x" * 44_000 + "\n"
    )
    assert widget_violations(script) == [
        "1: the file has 1057 lines (> 1000)",
        f"1: the file has {script.stat().st_size} bytes (> 44000)",
        "2: long has 52 lines (> 50)",
        "54: wide has 9 parameters (> 8)",
    ]
