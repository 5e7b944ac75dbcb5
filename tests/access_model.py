"""Who may read what, written again in Python from docs/retrieval.md
("Filters", "Groups"), independently of the SQL (retrieval/filters.py): the
isolation property checks every reply against it, and random filters drawn
here (:func:`filters_strategy`) against random metadata
(:func:`metadata_strategy`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

GROUPS = ("g1", "g2")
_SCALARS = ("red", "blue", "a", "b", "2", 0, 1, 2, 3, True)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    return "number" if isinstance(value, int | float) else "string"


def _equal(stored: Any, value: Any) -> bool:
    return _kind(stored) == _kind(value) and stored == value


def _comparison(metadata: dict[str, Any], node: dict[str, Any]) -> bool:
    if node["key"] not in metadata:
        return False  # a missing key matches nothing, ne and nin included
    stored, value, operator = metadata[node["key"]], node["value"], node["type"]
    if isinstance(stored, list):
        if operator == "eq":
            return isinstance(value, str) and value in stored
        if operator == "ne":
            return isinstance(value, str) and value not in stored
        strings = [v for v in value] if operator in ("in", "nin") else []
        strings = [v for v in strings if isinstance(v, str)]
        if operator == "in":
            return any(s in stored for s in strings)
        if operator == "nin":
            return bool(strings) and not any(s in stored for s in strings)
        return False  # lists have no order
    if operator == "eq":
        return _equal(stored, value)
    if operator == "ne":
        return _kind(stored) == _kind(value) and stored != value
    if operator == "in":
        return any(_equal(stored, v) for v in value)
    if operator == "nin":
        return _kind(stored) in {_kind(v) for v in value} and not any(_equal(stored, v) for v in value)
    if _kind(stored) != _kind(value) or _kind(value) == "boolean":
        return False
    if operator == "gt":
        return bool(stored > value)
    if operator == "gte":
        return bool(stored >= value)
    if operator == "lt":
        return bool(stored < value)
    return bool(stored <= value)


def matches(metadata: dict[str, Any], node: dict[str, Any] | None) -> bool:
    """Whether a document with ``metadata`` passes the filter ``node`` (None: no filter)."""
    if node is None:
        return True
    if node["type"] == "and":
        return all(matches(metadata, child) for child in node["filters"])
    if node["type"] == "or":
        return any(matches(metadata, child) for child in node["filters"])
    return _comparison(metadata, node)


def opens(access: list[str] | None, groups: Sequence[str] | None) -> bool:
    """Whether a document whose access groups are ``access`` (None: open) is
    read by an end user holding ``groups`` (None: no group condition)."""
    return groups is None or access is None or bool(set(access) & set(groups))


def metadata_strategy() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "color": st.sampled_from(["red", "blue"]),
            "n": st.one_of(st.integers(0, 3), st.just("2")),
            "tags": st.lists(st.sampled_from(["a", "b"]), unique=True, max_size=2),
            "flag": st.booleans(),
        },
    )


def access_strategy() -> st.SearchStrategy[list[str] | None]:
    return st.one_of(st.none(), st.lists(st.sampled_from(GROUPS), unique=True, max_size=2))


def groups_strategy() -> st.SearchStrategy[list[str] | None]:
    return st.one_of(st.none(), st.lists(st.sampled_from(GROUPS), unique=True, max_size=2))


def _comparison_strategy() -> st.SearchStrategy[dict[str, Any]]:
    key = st.sampled_from(["color", "n", "tags", "flag", "missing"])
    scalar = st.sampled_from(_SCALARS)
    ordered = st.sampled_from([v for v in _SCALARS if not isinstance(v, bool)])
    return st.one_of(
        st.builds(
            lambda t, k, v: {"type": t, "key": k, "value": v}, st.sampled_from(["eq", "ne"]), key, scalar
        ),
        st.builds(
            lambda t, k, v: {"type": t, "key": k, "value": v},
            st.sampled_from(["gt", "gte", "lt", "lte"]),
            key,
            ordered,
        ),
        st.builds(
            lambda t, k, v: {"type": t, "key": k, "value": v},
            st.sampled_from(["in", "nin"]),
            key,
            st.lists(scalar, min_size=1, max_size=3),
        ),
    )


def filters_strategy() -> st.SearchStrategy[dict[str, Any]]:
    return st.recursive(
        _comparison_strategy(),
        lambda children: st.builds(
            lambda t, fs: {"type": t, "filters": fs},
            st.sampled_from(["and", "or"]),
            st.lists(children, min_size=1, max_size=3),
        ),
        max_leaves=5,
    )
