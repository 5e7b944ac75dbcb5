"""The one rule for a test that lacks a part it needs (a browser, the vLLM
build, the ONNX export, a replica): under CI it fails; only a developer's
local run without ``CI`` set may skip it, saying what to install."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def part_missing(reason: str) -> NoReturn:
    if os.environ.get("CI"):
        pytest.fail(f"a part this test needs is missing under CI: {reason}")
    pytest.skip(reason)
