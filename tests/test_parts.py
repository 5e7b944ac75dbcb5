"""A missing part fails the test under CI and skips it only outside CI."""

from __future__ import annotations

import pytest

from tests.parts import part_missing


def test_under_ci_a_missing_part_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="missing under CI: no browser"):
        part_missing("no browser")


def test_outside_ci_a_missing_part_skips_saying_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install chromium"):
        part_missing("apt-get install chromium")
