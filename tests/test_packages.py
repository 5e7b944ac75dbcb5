"""Every top-level package of the project (import-linter's ``root_packages``
in pyproject.toml) is everywhere a package must be named: installed
(pyproject's ``packages.find``), copied into the image (Dockerfile),
type-checked (Makefile, scripts/test), walked by the size and architecture
tests, and, when it is a Django app, installed in Django. A new package
named in one place and forgotten in another (the image without it, say) is
found here rather than in a deployment."""

from __future__ import annotations

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
