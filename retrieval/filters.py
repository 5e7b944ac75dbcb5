"""Who may read what: metadata filters, end-user groups and a token's
resources, as one condition on the resource inside every search statement.

**Filters**: a request's filter is checked by :mod:`retrieval.filter_grammar`
(its shape, OpenAI's file-search one, and its limits); here it becomes SQL.

Semantics, all failing closed (``Resource.metadata``: strings, numbers,
booleans, lists of strings):

- a key the document does not have matches nothing, for every operator
  (``ne`` and ``nin`` too: a document without ``lang`` is not "not German");
- numbers compare as numbers, strings as strings in code-point order (ISO
  8601 dates compare as dates), booleans only with ``eq``/``ne``; a value of
  another type than the document's matches nothing (``eq 5`` against
  ``"5"``, ``ne 5`` against ``"5"``, ``gt 3`` against ``"4"``);
- against a list of strings, ``eq "x"`` is membership ("x" is in the list),
  ``ne "x"`` "x" is not in it, ``in [...]`` the lists share an element,
  ``nin [...]`` they share none; the order comparisons match no list;
- ``in``/``nin`` take 1 to ``MAX_VALUES`` scalars: ``in`` is ``eq`` to
  any, ``nin`` is the key present with the document's type among the
  values' types and equal to none.

**Groups**: a resource's ``access`` is ``null`` (open to every end user) or
``{"groups": [...]}``; an end user holding one of them reads it, one holding
none of them does not (an empty list: no end user). Without ``groups`` (an
API key that sends none) there is no condition.

**Resources**: an end-user token's ``resource_ids`` confine it to those.

:class:`Access` holds the three; :func:`access_condition` compiles its
:attr:`Access.shape` (the filter's structure, without its values) into a SQL
condition on the resource whose every value is a bound parameter
(:meth:`Access.params`): statements are cached by their shape
(retrieval/search/statements.py), and a filter's values never reach SQL as
text.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from django.db.models import BooleanField
from django.db.models.expressions import RawSQL
from psycopg import sql

from retrieval.filter_grammar import COMPOUNDS, Compound, Filter, Scalar, filter_json

_ORDERS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
Kind = Literal["string", "number", "boolean", "list"]


def _kind(value: Scalar) -> Kind:
    if isinstance(value, bool):
        return "boolean"
    return "number" if isinstance(value, int | float) else "string"


# The shape of a filter: its structure and each comparison's operator and
# value type, without keys or values (those are bound parameters).
FilterShape: TypeAlias = tuple[Any, ...]


def _shape(node: Filter) -> FilterShape:
    if isinstance(node, Compound):
        return (node.type, tuple(_shape(child) for child in node.filters))
    kind = "list" if isinstance(node.value, tuple) else _kind(node.value)
    return (node.type, kind)


@dataclass(frozen=True)
class AccessShape:
    """What a statement's text depends on: which conditions there are, and
    the filter's structure (:func:`access_condition`)."""

    filters: FilterShape | None
    groups: bool
    resources: bool


@dataclass(frozen=True)
class Access:
    """The documents a search may read from: those matching ``filters`` (None:
    any), open to ``groups`` (None: no group condition; ``()``: open
    documents only) and among ``resource_ids`` (None: any)."""

    filters: Filter | None = None
    groups: tuple[str, ...] | None = None
    resource_ids: tuple[uuid.UUID, ...] | None = None

    @property
    def shape(self) -> AccessShape | None:
        """None when nothing is restricted: the unfiltered statements."""
        if self.filters is None and self.groups is None and self.resource_ids is None:
            return None
        return AccessShape(
            filters=_shape(self.filters) if self.filters is not None else None,
            groups=self.groups is not None,
            resources=self.resource_ids is not None,
        )

    def params(self) -> dict[str, Any]:
        """The bound values of :func:`access_condition` for this access's shape."""
        params: dict[str, Any] = {}
        if self.filters is not None:
            _filter_params(self.filters, params, [0])
        if self.groups is not None:
            params["access_groups"] = list(self.groups)
        if self.resource_ids is not None:
            params["access_resources"] = list(self.resource_ids)
        return params

    def as_json(self) -> dict[str, Any]:
        """The effective access, as the prompt trace and the certificate name it."""
        return {
            "filters": filter_json(self.filters) if self.filters is not None else None,
            "groups": list(self.groups) if self.groups is not None else None,
            "resource_ids": [str(r) for r in self.resource_ids] if self.resource_ids is not None else None,
        }


OPEN = Access()


def _filter_params(node: Filter, params: dict[str, Any], counter: list[int]) -> None:
    if isinstance(node, Compound):
        for child in node.filters:
            _filter_params(child, params, counter)
        return
    n = counter[0]
    counter[0] += 1
    params[f"access_f{n}_key"] = node.key
    value = node.value
    if isinstance(value, tuple):
        params[f"access_f{n}_value"] = json.dumps(list(value))
        params[f"access_f{n}_strings"] = [v for v in value if isinstance(v, str)]
        params[f"access_f{n}_types"] = sorted({_kind(v) for v in value})
    elif node.type in _ORDERS and isinstance(value, str):
        params[f"access_f{n}_value"] = value
    else:
        params[f"access_f{n}_value"] = json.dumps(value)
        # ne: the types it compares with (a string also with a list of strings).
        params[f"access_f{n}_types"] = ["string", "array"] if isinstance(value, str) else [_kind(value)]


def access_condition(shape: AccessShape, *, table: sql.Composable) -> sql.Composable:
    """The SQL condition on the resource ``table`` (an alias) for an access
    of this ``shape``; its placeholders are :meth:`Access.params`'."""
    parts: list[sql.Composable] = []
    if shape.filters is not None:
        parts.append(_condition(shape.filters, table, [0]))
    if shape.groups:
        # An open document, or one whose groups share one with the end user's.
        parts.append(
            sql.SQL(
                "({t}.access IS NULL"
                " OR coalesce(({t}.access -> 'groups') ?| %(access_groups)s::text[], false))"
            ).format(t=table)
        )
    if shape.resources:
        parts.append(sql.SQL("{t}.id = ANY(%(access_resources)s::uuid[])").format(t=table))
    return sql.SQL("({})").format(sql.SQL(" AND ").join(parts))


def _condition(shape: FilterShape, table: sql.Composable, counter: list[int]) -> sql.Composable:
    kind = shape[0]
    if kind in COMPOUNDS:
        joiner = sql.SQL(" AND " if kind == "and" else " OR ")
        return sql.SQL("({})").format(joiner.join(_condition(child, table, counter) for child in shape[1]))
    n = counter[0]
    counter[0] += 1
    value_type = shape[1]

    def p(name: str) -> sql.Placeholder:
        return sql.Placeholder(f"access_f{n}_{name}")

    m = sql.SQL("({t}.metadata -> {key})").format(t=table, key=p("key"))
    if kind == "eq":
        # Equality of scalars of one type, or membership in a list of strings.
        test = sql.SQL("{m} @> {v}::jsonb").format(m=m, v=p("value"))
    elif kind == "ne":
        test = sql.SQL("jsonb_typeof({m}) = ANY({types}::text[]) AND NOT {m} @> {v}::jsonb").format(
            m=m, types=p("types"), v=p("value")
        )
    elif kind in _ORDERS and value_type == "number":
        # jsonb orders two numbers as numbers.
        test = sql.SQL("jsonb_typeof({m}) = 'number' AND {m} {op} {v}::jsonb").format(
            m=m, op=sql.SQL(_ORDERS[kind]), v=p("value")
        )
    elif kind in _ORDERS:
        # Strings in code-point order, whatever the database's collation.
        test = sql.SQL(
            "jsonb_typeof({m}) = 'string' AND ({m} #>> '{{}}') COLLATE \"C\" {op} {v}::text COLLATE \"C\""
        ).format(m=m, op=sql.SQL(_ORDERS[kind]), v=p("value"))
    elif kind == "in":
        test = sql.SQL(
            "CASE WHEN jsonb_typeof({m}) = 'array' THEN {m} ?| {strings}::text[]"
            " ELSE {v}::jsonb @> jsonb_build_array({m}) END"
        ).format(m=m, strings=p("strings"), v=p("value"))
    else:  # nin
        test = sql.SQL(
            "CASE WHEN jsonb_typeof({m}) = 'array'"
            " THEN cardinality({strings}::text[]) > 0 AND NOT {m} ?| {strings}::text[]"
            " ELSE jsonb_typeof({m}) = ANY({types}::text[]) AND NOT {v}::jsonb @> jsonb_build_array({m}) END"
        ).format(m=m, strings=p("strings"), types=p("types"), v=p("value"))
    # A missing key makes the test NULL: false, so that no compound can turn it true.
    return sql.SQL("coalesce({}, false)").format(test)


_NAMED = re.compile(r"%\((\w+)\)s")


def access_expression(access: Access, *, table: str) -> RawSQL | None:
    """The access as a boolean ORM expression on the model whose table is
    ``table`` (``queryset.filter(expression)``); None when open."""
    shape = access.shape
    if shape is None:
        return None
    text = access_condition(shape, table=sql.Identifier(table)).as_string()
    values = access.params()
    names: list[str] = []

    def positional(match: re.Match[str]) -> str:
        names.append(match.group(1))
        return "%s"

    text = _NAMED.sub(positional, text)
    # Every value is a bound parameter: the text holds only the shape's SQL.
    return RawSQL(text, [values[name] for name in names], output_field=BooleanField())  # noqa: S611
