#!/usr/bin/env python
"""How often following a chat turn through the code leaves a file and comes
back to it: a static walk of the calls from ``turn_prepare``.

    .venv/bin/python bench/turn_walk.py                  # the working tree
    .venv/bin/python bench/turn_walk.py --rev c27618c    # a commit, for a before/after

The walk (``ast``, no import): starting at
``chat.services.turn.prepare.turn_prepare``, every call the body makes to a
function of the project — by its name in the module, a name imported with
``from … import``, ``module.function`` through an imported module, or
``self.method`` / ``cls.method`` in the same class — is followed, depth
first, in the order the calls stand in the source; each function is walked
once (a second call to it is not followed again). A call into a function of
another file enters that file; its return goes back to the caller's file.
Printed: the files entered, the transitions in all, and the **returns to a
file already left** (a transition into a file the walk was in before and
left), with the files entered most often. ``--within chat/`` counts only the
transitions between files of ``chat/`` (the walk still goes everywhere).
"""

from __future__ import annotations

import argparse
import ast
import itertools
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START = ("chat.services.turn.prepare", "turn_prepare")


@dataclass
class Module:
    name: str
    path: str
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    # method name -> (class name, node), per class
    methods: dict[str, dict[str, ast.FunctionDef | ast.AsyncFunctionDef]] = field(default_factory=dict)
    # a name bound by an import: ("module", "x.y") or ("name", "x.y", "f")
    imports: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _read(path: str, rev: str | None) -> str:
    if rev is None:
        return (ROOT / path).read_text(encoding="utf-8")
    return subprocess.run(
        ["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout


def _files(rev: str | None) -> list[str]:
    """The project's Python files (tests, bench, scripts and migrations aside)."""
    command = (
        ["git", "ls-files", "-co", "--exclude-standard"]
        if rev is None
        else ["git", "ls-tree", "-r", "--name-only", rev]
    )
    listed = subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True).stdout.split()
    return [
        path
        for path in listed
        if path.endswith(".py")
        and not path.startswith(("tests/", "bench/", "scripts/"))
        and "/migrations/" not in path
        and (rev is not None or (ROOT / path).exists())
    ]


def _module_name(path: str) -> str:
    name = path[: -len(".py")].replace("/", ".")
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def _resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, target] if target else base)


def load(rev: str | None) -> dict[str, Module]:
    modules: dict[str, Module] = {}
    for path in _files(rev):
        try:
            tree = ast.parse(_read(path, rev))
        except (SyntaxError, subprocess.CalledProcessError):
            continue
        module = Module(_module_name(path), path)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                module.functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                module.methods[node.name] = {
                    n.name: n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                }
        for found in ast.walk(tree):
            if isinstance(found, ast.Import):
                for alias in found.names:
                    module.imports[alias.asname or alias.name.split(".")[0]] = ("module", alias.name)
            elif isinstance(found, ast.ImportFrom):
                source = found.module or ""
                if found.level:
                    package = path.endswith("__init__.py")
                    source = _resolve_relative(module.name, package, found.level, found.module)
                for alias in found.names:
                    module.imports[alias.asname or alias.name] = ("name", source, alias.name)
        modules[module.name] = module
    return modules


def _function(modules: dict[str, Module], module: str, name: str, depth: int = 0) -> tuple[str, str] | None:
    """Where ``module.name`` is defined, following re-exports (``__init__`` imports)."""
    found = modules.get(module)
    if found is None or depth > 5:
        return None
    if name in found.functions:
        return (module, name)
    if f"{module}.{name}" in modules:
        return None  # a submodule, not a function
    bound = found.imports.get(name)
    if bound and bound[0] == "name":
        return _function(modules, bound[1], bound[2], depth + 1)
    return None


def callees(
    modules: dict[str, Module], module: str, node: ast.AST, owner: str | None
) -> list[tuple[str, str]]:
    here = modules[module]
    out: list[tuple[str, str]] = []
    calls = sorted(
        (n for n in ast.walk(node) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset)
    )
    for call in calls:
        func = call.func
        target: tuple[str, str] | None = None
        if isinstance(func, ast.Name):
            target = _function(modules, module, func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            base = func.value.id
            if base in ("self", "cls") and owner and func.attr in here.methods.get(owner, {}):
                target = (module, f"{owner}.{func.attr}")
            else:
                bound = here.imports.get(base)
                if bound and bound[0] == "module":
                    target = _function(modules, bound[1], func.attr)
                elif bound and bound[0] == "name" and f"{bound[1]}.{bound[2]}" in modules:
                    target = _function(modules, f"{bound[1]}.{bound[2]}", func.attr)
        if target is not None:
            out.append(target)
    return out


def _node(modules: dict[str, Module], target: tuple[str, str]) -> tuple[ast.AST, str | None]:
    module, name = target
    if "." in name:
        owner, method = name.split(".", 1)
        return modules[module].methods[owner][method], owner
    return modules[module].functions[name], None


def walk(modules: dict[str, Module]) -> list[str]:
    """The files the walk is in, one entry per transition (module doc)."""
    sequence = [modules[START[0]].path]
    seen: set[tuple[str, str]] = {START}

    def visit(target: tuple[str, str]) -> None:
        node, owner = _node(modules, target)
        here = modules[target[0]].path
        for callee in callees(modules, target[0], node, owner):
            if callee in seen:
                continue
            seen.add(callee)
            there = modules[callee[0]].path
            if there != here:
                sequence.append(there)
            visit(callee)
            if there != here:
                sequence.append(here)

    visit(START)
    return sequence


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rev", help="a commit to read instead of the working tree")
    parser.add_argument("--within", default="", help="count only the files under this folder (chat/)")
    args = parser.parse_args()
    sequence: list[str] = []
    for path in walk(load(args.rev)):
        if path.startswith(args.within) and (not sequence or sequence[-1] != path):
            sequence.append(path)
    returns = 0
    left: set[str] = set()
    entered: Counter[str] = Counter()
    for before, after in itertools.pairwise(sequence):
        left.add(before)
        entered[after] += 1
        if after in left:
            returns += 1
    print(f"files entered: {len(set(sequence))}; transitions: {len(sequence) - 1}; "
          f"returns to a file already left: {returns}")  # fmt: skip
    print("entered most often: " + ", ".join(f"{path} {n}" for path, n in entered.most_common(8)))


if __name__ == "__main__":
    main()
