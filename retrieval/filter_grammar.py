"""The filter a request sends, and an end user's groups, as data: their
grammar and its limits, checked before anything reaches SQL
(:mod:`retrieval.filters` compiles a checked filter into the condition).

**Filters** take OpenAI's file-search shape (docs/retrieval.md, "Filters")::

    {"type": "eq"|"ne"|"gt"|"gte"|"lt"|"lte"|"in"|"nin", "key": "<metadata key>", "value": ...}
    {"type": "and"|"or", "filters": [<filter>, ...]}

:func:`filters_parse` checks a request's filter and names the path of a bad
node (``filters.filters[1].type``); :func:`filter_json` writes a parsed one
back in the same shape (the prompt trace and the certificate name it).
A value is a string, a number or a boolean (booleans only with ``eq`` and
``ne``); ``in``/``nin`` take 1 to :data:`MAX_VALUES` of them.

**Groups** (:func:`groups_parse`): 0 to :data:`MAX_GROUPS` strings, each
1 to :data:`MAX_GROUP_CHARS` characters.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from daneshyar.exceptions import ValidationFailed

# Compound filters nest at most this deep: a comparison inside 8 levels of
# and/or is accepted, inside 9 it is a 400.
MAX_DEPTH = 8
# Nodes (comparisons and compounds) in one filter.
MAX_NODES = 64
# Values of one in/nin comparison.
MAX_VALUES = 100
# A key as Resource.metadata allows it (spec "Additions (v1.3)").
KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")
# A string value: at most as long as a stored one.
MAX_STRING_CHARS = 512
# Groups an end user holds (a token's claim, an API-key request's body).
MAX_GROUPS = 64
MAX_GROUP_CHARS = 128

COMPARISONS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin")
COMPOUNDS = ("and", "or")
# The order comparisons (booleans compare only with eq and ne).
ORDERS = ("gt", "gte", "lt", "lte")

Scalar: TypeAlias = str | int | float | bool


@dataclass(frozen=True)
class Comparison:
    type: str
    key: str
    value: Scalar | tuple[Scalar, ...]


@dataclass(frozen=True)
class Compound:
    type: str
    filters: tuple[Filter, ...]


Filter: TypeAlias = Comparison | Compound


class _Invalid(Exception):
    def __init__(self, path: str, message: str):
        super().__init__(message)
        self.path = path
        self.message = message


def filters_parse(data: object, *, field: str = "filters") -> Filter:
    """The filter a request sent, checked (400 ``validation_error`` naming
    the path of the first bad node, e.g. ``filters.filters[1].type``)."""
    counter = [0]
    try:
        return _node(data, field, depth=0, counter=counter)
    except _Invalid as invalid:
        raise ValidationFailed("The filter is not valid.", fields={invalid.path: [invalid.message]}) from None


def _node(data: object, path: str, *, depth: int, counter: list[int]) -> Filter:
    counter[0] += 1
    if counter[0] > MAX_NODES:
        raise _Invalid(path, f"A filter has at most {MAX_NODES} nodes.")
    if not isinstance(data, Mapping):
        raise _Invalid(path, 'Expected an object: {"type", "key", "value"} or {"type", "filters"}.')
    kind = data.get("type")
    if kind in COMPOUNDS:
        _only(data, path, ("type", "filters"))
        if depth >= MAX_DEPTH:
            raise _Invalid(path, f"Compound filters nest at most {MAX_DEPTH} deep.")
        children = data.get("filters")
        if not isinstance(children, list) or not children:
            raise _Invalid(f"{path}.filters", "Expected a non-empty list of filters.")
        return Compound(
            type=str(kind),
            filters=tuple(
                _node(child, f"{path}.filters[{i}]", depth=depth + 1, counter=counter)
                for i, child in enumerate(children)
            ),
        )
    if kind in COMPARISONS:
        _only(data, path, ("type", "key", "value"))
        key = data.get("key")
        if not isinstance(key, str) or not KEY.fullmatch(key):
            raise _Invalid(f"{path}.key", "Expected a metadata key: 1 to 64 of A-Z a-z 0-9 _ . -")
        if "value" not in data:
            raise _Invalid(f"{path}.value", "This field is required.")
        return Comparison(type=str(kind), key=key, value=_value(str(kind), data["value"], f"{path}.value"))
    names = ", ".join(COMPARISONS + COMPOUNDS)
    raise _Invalid(f"{path}.type", f"Expected one of {names}.")


def _only(data: Mapping[str, Any], path: str, names: tuple[str, ...]) -> None:
    for name in data:
        if name not in names:
            raise _Invalid(f"{path}.{name}", "Unknown field.")


def _value(kind: str, value: object, path: str) -> Scalar | tuple[Scalar, ...]:
    if kind in ("in", "nin"):
        if not isinstance(value, list) or not 1 <= len(value) <= MAX_VALUES:
            raise _Invalid(path, f"Expected a list of 1 to {MAX_VALUES} strings, numbers or booleans.")
        return tuple(_scalar(v, f"{path}[{i}]") for i, v in enumerate(value))
    scalar = _scalar(value, path)
    if kind in ORDERS and isinstance(scalar, bool):
        raise _Invalid(path, "Expected a string or a number: booleans compare only with eq and ne.")
    return scalar


def _scalar(value: object, path: str) -> Scalar:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise _Invalid(path, "Expected a finite number.")
        return value
    if isinstance(value, str):
        if len(value) > MAX_STRING_CHARS:
            raise _Invalid(path, f"Expected at most {MAX_STRING_CHARS} characters.")
        if "\x00" in value:
            raise _Invalid(path, "Expected text without NUL characters.")
        return value
    raise _Invalid(path, "Expected a string, a number or a boolean.")


def filter_json(node: Filter) -> dict[str, Any]:
    """A parsed filter in the request's shape."""
    if isinstance(node, Compound):
        return {"type": node.type, "filters": [filter_json(child) for child in node.filters]}
    value = list(node.value) if isinstance(node.value, tuple) else node.value
    return {"type": node.type, "key": node.key, "value": value}


def groups_parse(data: object, *, field: str = "groups") -> tuple[str, ...]:
    """An end user's groups (0 to :data:`MAX_GROUPS` strings of 1 to
    :data:`MAX_GROUP_CHARS` characters), distinct, in order; 400 otherwise."""
    if not isinstance(data, list) or len(data) > MAX_GROUPS:
        raise ValidationFailed(
            "The groups are not valid.", fields={field: [f"Expected a list of at most {MAX_GROUPS} strings."]}
        )
    for i, group in enumerate(data):
        if not isinstance(group, str) or not 1 <= len(group) <= MAX_GROUP_CHARS or "\x00" in group:
            raise ValidationFailed(
                "The groups are not valid.",
                fields={f"{field}[{i}]": [f"Expected a string of 1 to {MAX_GROUP_CHARS} characters."]},
            )
    return tuple(dict.fromkeys(data))
