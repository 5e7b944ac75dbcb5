"""Every top-level package of the project (import-linter's ``root_packages``
in pyproject.toml) is everywhere a package must be named: installed
(pyproject's ``packages.find``), copied into the image (Dockerfile),
type-checked (Makefile, scripts/test), walked by the size and architecture
tests, and, when it is a Django app, installed in Django. A new package
named in one place and forgotten in another (the image without it, say) is
found here rather than in a deployment."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

from django.conf import settings

from tests import test_architecture, test_architecture_doc, test_sizes

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PACKAGES = PYPROJECT["tool"]["importlinter"]["root_packages"]


def _mypy_packages(text: str) -> set[str]:
    line = next(line for line in text.splitlines() if "-m mypy " in line)
    return set(line.split("-m mypy ", 1)[1].split())


def test_every_package_is_installed_and_copied_into_the_image() -> None:
    include = PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    copied = set(re.findall(r"^COPY (\w+) \./\1$", (ROOT / "Dockerfile").read_text(), flags=re.MULTILINE))
    for package in PACKAGES:
        assert f"{package}*" in include, package
        assert package in copied, package


def test_every_package_is_type_checked_and_walked_by_the_rules() -> None:
    for runner in ("Makefile", "scripts/test"):
        assert set(PACKAGES) <= _mypy_packages((ROOT / runner).read_text()), runner
    for module in (test_sizes, test_architecture, test_architecture_doc):
        assert set(module.PACKAGES) == set(PACKAGES), module.__name__


def test_every_app_is_installed() -> None:
    apps = [package for package in PACKAGES if (ROOT / package / "apps.py").exists()]
    assert apps, "no app found"
    for package in apps:
        installed = settings.INSTALLED_APPS
        assert package in installed or any(a.startswith(f"{package}.apps.") for a in installed), package


def package_modules(package: Path) -> list[str]:
    """A package's modules and subpackages as its docstring names them:
    ``name.py`` and ``name/`` (migrations and ``__init__.py`` left out)."""
    found = []
    for path in sorted(package.iterdir()):
        if path.suffix == ".py" and path.name != "__init__.py":
            found.append(path.name)
        elif path.is_dir() and path.name != "migrations" and (path / "__init__.py").exists():
            found.append(f"{path.name}/")
    return found


def unnamed_modules(docstring: str, modules: list[str]) -> list[str]:
    """The modules a docstring does not name: neither as ``name.py`` (or
    ``name/``) nor as ``name`` in double backticks."""
    missing = []
    for module in modules:
        stem = module.removesuffix(".py").removesuffix("/")
        written = re.compile(rf"(?<![\w/.]){re.escape(module)}(?![\w])")
        spanned = re.compile(rf"``{re.escape(stem)}(\.py|/)?``")
        if not (written.search(docstring) or spanned.search(docstring)):
            missing.append(module)
    return missing


def test_every_package_docstring_names_its_modules() -> None:
    """Each package's ``__init__.py`` says what its modules are, one line
    each: a module added without a line there is found here."""
    unnamed = {}
    for top in PACKAGES:
        for init in sorted((ROOT / top).rglob("__init__.py")):
            if "migrations" in init.parts:
                continue
            docstring = ast.get_docstring(ast.parse(init.read_text())) or ""
            missing = unnamed_modules(docstring, package_modules(init.parent))
            if missing:
                unnamed[str(init.relative_to(ROOT))] = missing
    assert unnamed == {}


def test_an_unnamed_module_is_found() -> None:
    docstring = "- ``api.py``: the envelope\n- ``config/``: settings\n``tasks``: the tasks; api_extra.py"
    modules = ["api.py", "config/", "tasks.py", "urls.py", "extra.py", "search/"]
    assert unnamed_modules(docstring, modules) == ["urls.py", "extra.py", "search/"]
