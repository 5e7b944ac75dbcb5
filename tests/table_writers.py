"""Which modules write which table, found by reading the source
(tests/test_architecture_doc.py holds docs/architecture.md's table to it).

What counts as a write of a model's table, in a module of the project's
packages (migrations and tests left out):

- a call of ``create``, ``get_or_create``, ``update_or_create``,
  ``bulk_create``, ``bulk_update``, ``update`` or ``delete`` on a chain
  rooted at ``Model.objects`` (``Model.objects.filter(...).update(...)``),
  at a name the function binds to the model (below), or at a call of a
  function of the project whose return annotation names the model
  (``-> Model``, ``-> QuerySet[Model]``; matched by the function's name);
- a call of ``save``, ``delete`` or ``update`` on a name the function (or
  the module, at its top level) binds to the model: a parameter annotated
  with it, ``x = Model(...)``, ``x = `` a chain as above, ``x, _ = ...``;
- a string that is not a docstring holding ``UPDATE``, ``INSERT INTO`` or
  ``DELETE FROM`` followed by the model's ``db_table``, or by a ``{name}``
  that the module fills, in a ``format`` call or a dict, with the model's
  table (``name=table(Model)``, ``"name": PASSAGE`` where ``PASSAGE =
  table(Model)`` somewhere in the project).

Not counted: rows a database deletes by cascade (``on_delete=CASCADE``) or
writes by trigger, rows the Django admin's generic views write, and writes
through a name the scan cannot bind to a model (a ``save`` on an object of
unknown type is listed by :func:`scan`, so that it is not silently missed)."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from django.apps import apps
from django.db import models

ROOT = Path(__file__).resolve().parents[1]
MANAGER_WRITES = frozenset(
    {"create", "get_or_create", "update_or_create", "bulk_create", "bulk_update", "update", "delete"}
)
INSTANCE_WRITES = frozenset({"save", "delete", "update"})
Known = dict[str, type[models.Model]]
SQL_WRITE = re.compile(r"\b(?:UPDATE|INSERT\s+INTO|DELETE\s+FROM)\s+(\{\w+\}|\"?\w+\"?)")


def project_models(packages: tuple[str, ...]) -> dict[str, type[models.Model]]:
    """The project's models by class name."""
    found = {m.__name__: m for m in apps.get_models() if m.__module__.split(".")[0] in packages}
    return found


def module_files(packages: tuple[str, ...]) -> Iterator[Path]:
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def _base_model(node: ast.expr, names: dict[str, str], returns: dict[str, str]) -> str | None:
    """The model a call chain (``Model.objects.filter(...)``, ``x``,
    ``f(...).filter(...)``) is rooted at, if the scan can tell."""
    while True:
        if isinstance(node, ast.Call):
            node = node.func
            if isinstance(node, ast.Name):
                return names.get(node.id) or returns.get(node.id) or None
            if isinstance(node, ast.Attribute) and node.attr in returns:
                return returns[node.attr]
        elif isinstance(node, ast.Attribute):
            if node.attr == "objects" and isinstance(node.value, ast.Name):
                return node.value.id
            node = node.value
        elif isinstance(node, ast.Name):
            return names.get(node.id)
        else:
            return None


def _annotated_model(annotation: ast.expr | None, known: dict[str, type[models.Model]]) -> str | None:
    """``Model``, ``Model | None``, ``QuerySet[Model]``, ``"Model"``."""
    if annotation is None:
        return None
    text = ast.unparse(annotation).strip("'\"")
    words: list[str] = re.findall(r"\w+", text)
    for word in words:
        if word in known:
            return word
    return None


@cache
def _returns(packages: tuple[str, ...]) -> dict[str, str]:
    """The project's functions whose return annotation names a model, by name."""
    known = project_models(packages)
    out: dict[str, str] = {}
    for path in module_files(packages):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                model = _annotated_model(node.returns, known)
                if model is not None:
                    out[node.name] = model
    return out


def _bindings(
    function: ast.AST, known: dict[str, type[models.Model]], returns: dict[str, str]
) -> dict[str, str]:
    """The names a function binds to a model (module docstring)."""
    names: dict[str, str] = {}
    if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
        arguments = function.args
        for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
            model = _annotated_model(argument.annotation, known)
            if model is not None:
                names[argument.arg] = model
    for node in _own_nodes(function):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            model = _annotated_model(node.annotation, known)
            if model is not None:
                names[node.target.id] = model
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name):
                target = target.elts[0]
            if isinstance(target, ast.Name):
                model = _base_model(node.value, {**{m: m for m in known}, **names}, returns)
                if model in known:
                    names[target.id] = model
    return names


def _table_names(
    tree: ast.Module, known: dict[str, type[models.Model]], constants: dict[str, str]
) -> dict[str, str]:
    """``{name}`` placeholders the module fills with a model's table."""

    def model_of(value: ast.expr) -> str | None:
        if isinstance(value, ast.Name):
            return constants.get(value.id)
        if isinstance(value, ast.Call) and value.args and isinstance(value.args[0], ast.Name):
            return value.args[0].id if value.args[0].id in known else None
        return None

    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
            for keyword in node.keywords:
                model = model_of(keyword.value) if keyword.arg else None
                if model is not None:
                    out[keyword.arg or ""] = model
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    model = model_of(value)
                    if model is not None:
                        out[key.value] = model
    return out


@cache
def _table_constants(packages: tuple[str, ...]) -> dict[str, str]:
    """Module-level ``NAME = table(Model)`` across the project."""
    known = project_models(packages)
    out: dict[str, str] = {}
    for path in module_files(packages):
        for node in ast.parse(path.read_text()).body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call)
                and node.value.args
                and isinstance(node.value.args[0], ast.Name)
                and node.value.args[0].id in known
            ):
                out[node.targets[0].id] = node.value.args[0].id
    return out


def _docstrings(tree: ast.Module) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a scope (a module or a function) without those of the
    functions defined in it, which are scopes of their own."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))


def _functions(tree: ast.Module) -> Iterator[ast.AST]:
    """Each function (its own bindings), and the module for its top level."""
    yield tree
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


@cache
def scan(packages: tuple[str, ...]) -> tuple[dict[str, frozenset[str]], tuple[str, ...]]:
    """Each model's writers (module paths), and the ``save`` calls on a name
    the scan could not bind to a model (``path:line``)."""
    known = project_models(packages)
    returns = _returns(packages)
    constants = _table_constants(packages)
    writers: dict[str, set[str]] = defaultdict(set)
    unbound: list[str] = []
    for path in module_files(packages):
        relative = str(path.relative_to(ROOT))
        models_written, saves = module_writes(path.read_text(), known, returns, constants)
        for model in models_written:
            writers[model].add(relative)
        unbound.extend(f"{relative}:{line}" for line in saves)
    return {model: frozenset(paths) for model, paths in writers.items()}, tuple(sorted(set(unbound)))


def module_writes(
    source: str, known: Known, returns: dict[str, str], constants: dict[str, str]
) -> tuple[set[str], list[int]]:
    """The models one module's source writes, and the lines of its ``save``
    calls on a name of no model the scan can tell."""
    tree = ast.parse(source)
    written: set[str] = set()
    unbound: list[int] = []
    for function in _functions(tree):
        names = _bindings(function, known, returns)
        for node in _own_nodes(function):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            method, receiver = node.func.attr, node.func.value
            model = None
            if method in MANAGER_WRITES:
                model = _base_model(receiver, names, returns)
            if model is None and method in INSTANCE_WRITES and isinstance(receiver, ast.Name):
                model = names.get(receiver.id)
                if model is None and method == "save":
                    unbound.append(node.lineno)
            if model in known:
                written.add(model)
    placeholders = _table_names(tree, known, constants)
    by_table = {m._meta.db_table: name for name, m in known.items()}
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            for name in SQL_WRITE.findall(node.value):
                if name.startswith("{"):
                    found = placeholders.get(name[1:-1])
                else:
                    found = by_table.get(name.strip('"'))
                if found is not None:
                    written.add(found)
    return written, unbound
