"""The strict environment readers (daneshyar/env.py): every accepted spelling
reads as its value, an unset or blank variable as the default, and anything
else stops start-up with a message naming the variable."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from daneshyar.env import (
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_json,
    env_list,
    env_optional_str,
    env_str,
    env_url,
)

NAME = "DANESHYAR_TEST_VARIABLE"


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv(NAME, raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, "fallback"),
        ("", "fallback"),
        ("   ", "fallback"),
        ("value", "value"),
        ("  padded  ", "padded"),
    ],
)
def test_env_str_strips_and_falls_back_when_unset_or_blank(
    env: pytest.MonkeyPatch, raw: str | None, expected: str
) -> None:
    if raw is not None:
        env.setenv(NAME, raw)
    assert env_str(NAME, "fallback") == expected


@pytest.mark.parametrize(("raw", "expected"), [(None, None), ("", None), (" \t", None), (" x ", "x")])
def test_env_optional_str_is_none_when_unset_or_blank(
    env: pytest.MonkeyPatch, raw: str | None, expected: str | None
) -> None:
    if raw is not None:
        env.setenv(NAME, raw)
    assert env_optional_str(NAME) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", True),
        ("true", True),
        ("TRUE", True),
        (" Yes ", True),
        ("on", True),
        ("0", False),
        ("false", False),
        ("No", False),
        ("OFF", False),
        # Set but empty is an explicit "no", not the default.
        ("", False),
    ],
)
def test_env_bool_reads_every_documented_spelling(env: pytest.MonkeyPatch, raw: str, expected: bool) -> None:
    env.setenv(NAME, raw)
    assert env_bool(NAME, not expected) is expected


@pytest.mark.parametrize("default", [True, False])
def test_env_bool_unset_is_the_default(env: pytest.MonkeyPatch, default: bool) -> None:
    assert env_bool(NAME, default) is default


@pytest.mark.parametrize("raw", ["2", "y", "enabled", "truthy", "-1"])
def test_env_bool_rejects_anything_else_naming_the_value(env: pytest.MonkeyPatch, raw: str) -> None:
    env.setenv(NAME, raw)
    with pytest.raises(ImproperlyConfigured, match=f"{NAME} must be a boolean.*{raw!r}"):
        env_bool(NAME, True)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, 7),
        ("", 7),
        ("42", 42),
        (" 42 ", 42),
        ("1_000_000", 1_000_000),
        ("-3", -3),
    ],
)
def test_env_int_reads_integers_with_digit_separators(
    env: pytest.MonkeyPatch, raw: str | None, expected: int
) -> None:
    if raw is not None:
        env.setenv(NAME, raw)
    assert env_int(NAME, 7) == expected


@pytest.mark.parametrize("raw", ["4.5", "ten", "0x10", "1e3"])
def test_env_int_rejects_what_is_not_an_integer(env: pytest.MonkeyPatch, raw: str) -> None:
    env.setenv(NAME, raw)
    with pytest.raises(ImproperlyConfigured, match=f"{NAME} must be an integer, got {raw!r}"):
        env_int(NAME, 1)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("4", f"{NAME} must be at least 5, got 4"),
        ("11", f"{NAME} must be at most 10, got 11"),
    ],
)
def test_env_int_enforces_its_range(env: pytest.MonkeyPatch, raw: str, message: str) -> None:
    env.setenv(NAME, raw)
    with pytest.raises(ImproperlyConfigured, match=message):
        env_int(NAME, 5, minimum=5, maximum=10)


@pytest.mark.parametrize("raw", ["5", "10"])
def test_env_int_range_is_inclusive(env: pytest.MonkeyPatch, raw: str) -> None:
    env.setenv(NAME, raw)
    assert env_int(NAME, 7, minimum=5, maximum=10) == int(raw)


def test_env_int_checks_the_default_against_the_range_too(env: pytest.MonkeyPatch) -> None:
    # A default outside the range is a programming error caught at start-up.
    with pytest.raises(ImproperlyConfigured, match="must be at least 1, got 0"):
        env_int(NAME, 0, minimum=1)


@pytest.mark.parametrize(
    ("raw", "expected"), [(None, 2.5), ("", 2.5), ("0.25", 0.25), ("3", 3.0), ("1e-3", 0.001)]
)
def test_env_float_reads_numbers(env: pytest.MonkeyPatch, raw: str | None, expected: float) -> None:
    if raw is not None:
        env.setenv(NAME, raw)
    assert env_float(NAME, 2.5) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("fast", f"{NAME} must be a number, got 'fast'"),
        ("0.05", f"{NAME} must be at least 0.1, got 0.05"),
        ("9.5", f"{NAME} must be at most 9.0, got 9.5"),
    ],
)
def test_env_float_rejects_non_numbers_and_out_of_range(
    env: pytest.MonkeyPatch, raw: str, message: str
) -> None:
    env.setenv(NAME, raw)
    with pytest.raises(ImproperlyConfigured, match=message):
        env_float(NAME, 1.0, minimum=0.1, maximum=9.0)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, ["a", "b"]),
        ("", []),
        ("x", ["x"]),
        (" x , y ,, z ", ["x", "y", "z"]),
        (",,,", []),
    ],
)
def test_env_list_splits_on_commas_and_drops_empty_items(
    env: pytest.MonkeyPatch, raw: str | None, expected: list[str]
) -> None:
    if raw is not None:
        env.setenv(NAME, raw)
    assert env_list(NAME, ["a", "b"]) == expected


def test_env_list_returns_a_copy_of_the_default(env: pytest.MonkeyPatch) -> None:
    default = ["a"]
    value = env_list(NAME, default)
    value.append("b")
    assert default == ["a"]


def test_env_choice_accepts_a_listed_value_and_defaults_when_unset(env: pytest.MonkeyPatch) -> None:
    choices = ("onnx", "torch")
    assert env_choice(NAME, "onnx", choices) == "onnx"
    env.setenv(NAME, " torch ")
    assert env_choice(NAME, "onnx", choices) == "torch"


@pytest.mark.parametrize("raw", ["ONNX", "tensorflow", "onnx,torch"])
def test_env_choice_is_exact_and_lists_the_choices(env: pytest.MonkeyPatch, raw: str) -> None:
    env.setenv(NAME, raw)
    with pytest.raises(ImproperlyConfigured, match=f"{NAME} must be one of onnx, torch; got {raw!r}"):
        env_choice(NAME, "onnx", ("onnx", "torch"))


@pytest.mark.parametrize(
    ("raw", "default", "expected"),
    [
        (None, None, None),
        ("", None, None),
        (None, "redis://localhost:6379/0", "redis://localhost:6379/0"),
        ("", "redis://localhost:6379/0", "redis://localhost:6379/0"),
        ("rediss://cache.example:6380/1", None, "rediss://cache.example:6380/1"),
    ],
)
def test_env_url_accepts_listed_schemes_and_falls_back(
    env: pytest.MonkeyPatch, raw: str | None, default: str | None, expected: str | None
) -> None:
    if raw is not None:
        env.setenv(NAME, raw)
    assert env_url(NAME, default, schemes=("redis", "rediss")) == expected


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ("http://cache.example", "'http'"),
        ("localhost:6379", "'localhost'"),
        ("/var/run/redis.sock", "'none'"),
    ],
)
def test_env_url_names_the_wrong_scheme(env: pytest.MonkeyPatch, raw: str, named: str) -> None:
    env.setenv(NAME, raw)
    with pytest.raises(
        ImproperlyConfigured, match=f"{NAME} must be a URL with scheme redis or rediss; got {named}"
    ):
        env_url(NAME, None, schemes=("redis", "rediss"))


def test_a_default_url_with_a_wrong_scheme_is_refused_too(env: pytest.MonkeyPatch) -> None:
    with pytest.raises(ImproperlyConfigured, match="got 'mysql'"):
        env_url(NAME, "mysql://db/x", schemes=("postgresql",))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, {"default": True}),
        ("", {"default": True}),
        ('[{"id": "m", "default": true}]', [{"id": "m", "default": True}]),
        ("null", None),
        ("3", 3),
    ],
)
def test_env_json_parses_any_json_value(env: pytest.MonkeyPatch, raw: str | None, expected: Any) -> None:
    if raw is not None:
        env.setenv(NAME, raw)
    assert env_json(NAME, {"default": True}) == expected


@pytest.mark.parametrize("raw", ["{", "[1,]", "{'single': 'quotes'}", "True"])
def test_env_json_rejects_malformed_json(env: pytest.MonkeyPatch, raw: str) -> None:
    env.setenv(NAME, raw)
    with pytest.raises(ImproperlyConfigured, match=f"{NAME} must be valid JSON: "):
        env_json(NAME, None)
