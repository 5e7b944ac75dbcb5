"""Envelope, ids and cursor pagination shared by every API view."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Model, Q, QuerySet
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from daneshyar.exceptions import NotFound, ValidationFailed

M = TypeVar("M", bound=Model)

DEFAULT_LIMIT = 20
MAX_LIMIT = 100

# The prefix of every workspace-scoped route, relative to /api/v1/. Views
# under it derive from workspaces.access.WorkspaceApi (the tenant boundary).
WORKSPACE_ROUTE = "workspaces/<uuid:workspace_id>/"


class UUIDField(serializers.UUIDField):
    """A UUID sent as a string. DRF's own also takes integers (``false`` and
    ``0`` become the nil UUID): found by schema fuzzing on guard rules."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str):
            self.fail("invalid", value=data)
        return super().to_internal_value(data)


def uuid_of(value: object) -> uuid.UUID | None:
    """``value`` as a UUID: a UUID, or a string that spells one (with or
    without hyphens, as :class:`UUIDField` takes it); None for anything else."""
    if isinstance(value, uuid.UUID):
        return value
    if not isinstance(value, str):
        return None
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


def uuid_or_404(value: object) -> uuid.UUID:
    """The id of a row asked for by a path or a caller, as a UUID: a
    malformed one is a 404, like an id that names nothing (or another
    tenant's row)."""
    found = uuid_of(value)
    if found is None:
        raise NotFound()
    return found


class StringField(serializers.CharField):
    """Text sent as a JSON string. DRF's own CharField turns a number into
    its digits (``12345`` → ``"12345"``), so a body that breaks the schema
    would be stored as if it had kept it."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))


def timestamp(value: dt.datetime) -> str:
    """ISO 8601 as DRF renders datetimes (``Z`` for UTC): the one format of
    every timestamp the API and the transcript export write by hand."""
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def query_data(request: Request) -> dict[str, str]:
    """The query string as plain data for a serializer.

    Given the ``QueryDict`` itself, DRF reads it as an HTML form, where an
    empty value means "not sent": ``?status=`` would list every resource and
    ``?updated_since=`` export everything. As plain data an empty value is
    what it is, and an invalid one is a 400.
    """
    return request.query_params.dict()


def ok(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response({"status": "ok", "data": data}, status=status, headers=headers)


class PageParamsSerializer(serializers.Serializer[Any]):
    """The query of every list (also its parameters in the schema)."""

    cursor = serializers.CharField(
        required=False, max_length=512, help_text="next_cursor of the previous page (opaque)."
    )
    limit = serializers.IntegerField(required=False, min_value=1, max_value=MAX_LIMIT, default=DEFAULT_LIMIT)


def _encode_cursor(values: Sequence[Any]) -> str:
    raw = json.dumps([v if isinstance(v, int | float | bool) or v is None else str(v) for v in values])
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _invalid_cursor() -> ValidationFailed:
    return ValidationFailed("Invalid cursor.", fields={"cursor": ["Invalid cursor."]})


def _decode_cursor(cursor: str, model: type[Model], fields: Sequence[str]) -> list[Any]:
    """The sort key a cursor carries, each value checked as its model field
    would check it (type and range): a crafted cursor is a 400, never a
    database error."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        values = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
    except (binascii.Error, ValueError, UnicodeDecodeError):
        values = None
    if not isinstance(values, list) or len(values) != len(fields):
        raise _invalid_cursor()
    checked = []
    for name, value in zip(fields, values, strict=True):
        field = model._meta.get_field(name)
        if value is None or isinstance(value, list | dict):
            raise _invalid_cursor()
        try:
            python = field.to_python(value)  # type: ignore[union-attr]
            field.run_validators(python)  # type: ignore[union-attr]
        except (DjangoValidationError, ValueError, TypeError, OverflowError) as exc:
            raise _invalid_cursor() from exc
        checked.append(python)
    return checked


def paginate(
    request: Request,
    queryset: QuerySet[M],
    *,
    ordering: Sequence[str],
    serialize: Callable[[list[M]], Any],
) -> Response:
    """Keyset pagination over ``ordering`` (which must end in a unique field).

    The cursor is opaque to clients; it encodes the sort key of the last item,
    so pages stay stable while new rows arrive (unlike offsets).
    """
    params = PageParamsSerializer(data=query_data(request))
    params.is_valid(raise_exception=True)
    rows, next_cursor = keyset_page(
        queryset,
        ordering=ordering,
        limit=params.validated_data["limit"],
        cursor=params.validated_data.get("cursor"),
    )
    return ok({"items": serialize(rows), "next_cursor": next_cursor})


def keyset_page(
    queryset: QuerySet[M], *, ordering: Sequence[str], limit: int, cursor: str | None
) -> tuple[list[M], str | None]:
    """One page of ``queryset`` after ``cursor`` and the next page's cursor
    (None on the last page); a cursor that is not ours is a 400."""
    fields = [f.lstrip("-") for f in ordering]
    queryset = queryset.order_by(*ordering)
    if cursor:
        values = _decode_cursor(cursor, queryset.model, fields)
        queryset = queryset.filter(keyset_after(ordering, values))
    rows = list(queryset[: limit + 1])
    next_cursor = None
    if len(rows) > limit:
        rows = rows[:limit]
        next_cursor = _encode_cursor([_attr(rows[-1], f) for f in fields])
    return rows, next_cursor


def _attr(obj: Any, path: str) -> Any:
    for part in path.split("__"):
        obj = getattr(obj, part)
    return obj


def keyset_after(ordering: Sequence[str], values: Sequence[Any]) -> Q:
    """Rows strictly after ``values`` in ``ordering`` (lexicographic keyset)."""
    condition = Q()
    for index, field in enumerate(ordering):
        name = field.lstrip("-")
        lookup = "lt" if field.startswith("-") else "gt"
        step = Q(**{f"{name}__{lookup}": values[index]})
        for prev_field, prev_value in zip(ordering[:index], values[:index], strict=False):
            step &= Q(**{prev_field.lstrip("-"): prev_value})
        condition |= step
    return condition
