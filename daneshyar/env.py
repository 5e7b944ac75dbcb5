"""Strict readers for configuration from the environment.

Every reader fails at start-up with :class:`ImproperlyConfigured` naming the
variable and what was wrong, so a typo never becomes a silent default.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

N = TypeVar("N", int, float)

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None:
        return None
    return value.strip()


def env_str(name: str, default: str) -> str:
    value = _raw(name)
    return default if value is None or value == "" else value


def env_optional_str(name: str) -> str | None:
    value = _raw(name)
    return value or None


def env_optional_uuid(name: str) -> str | None:
    """A UUID in its canonical form, or None when unset."""
    value = _raw(name)
    if not value:
        return None
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a UUID; got {value!r}") from None


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false/1/0), got {value!r}")


def _number(
    name: str, default: N, parse: Callable[[str], N], kind: str, minimum: N | None, maximum: N | None
) -> N:
    value = _raw(name)
    if value is None or value == "":
        result = default
    else:
        try:
            result = parse(value)
        except ValueError:
            raise ImproperlyConfigured(f"{name} must be {kind}, got {value!r}") from None
    if minimum is not None and result < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {result}")
    if maximum is not None and result > maximum:
        raise ImproperlyConfigured(f"{name} must be at most {maximum}, got {result}")
    return result


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    return _number(name, default, lambda value: int(value.replace("_", "")), "an integer", minimum, maximum)


def env_float(
    name: str, default: float, *, minimum: float | None = None, maximum: float | None = None
) -> float:
    return _number(name, default, float, "a number", minimum, maximum)


def env_list(name: str, default: list[str]) -> list[str]:
    value = _raw(name)
    if value is None:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env_str(name, default)
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


def env_url(name: str, default: str | None, *, schemes: tuple[str, ...]) -> str | None:
    value = _raw(name) or default
    if value is None:
        return None
    parts = urlsplit(value)
    if parts.scheme not in schemes:
        raise ImproperlyConfigured(
            f"{name} must be a URL with scheme {' or '.join(schemes)}; got {parts.scheme or 'none'!r}"
        )
    return value


def env_json(name: str, default: Any) -> Any:
    value = _raw(name)
    if value is None or value == "":
        return default
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise ImproperlyConfigured(f"{name} must be valid JSON: {exc}") from None
