"""The API's fields for a resource's ``metadata`` and ``access``: the
serializer fields of a JSON body and of a multipart form (the object as a
JSON string), and the OpenAPI schema each states. What they accept, and
every message, is :mod:`resources.attributes`' check; a problem is raised
nested by its path (``metadata.price``, not ``metadata``).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from resources.attributes import (
    MAX_GROUP_CHARS,
    MAX_GROUPS,
    MAX_LIST_ITEMS,
    MAX_METADATA_KEYS,
    MAX_STRING_CHARS,
    Access,
    Metadata,
    Problems,
    access_normalize,
    access_problems,
    json_field,
    metadata_problems,
)

_METADATA_VALUE_SCHEMA: dict[str, Any] = {
    "oneOf": [
        {"type": "string", "maxLength": MAX_STRING_CHARS},
        {"type": "number"},
        {"type": "boolean"},
        {
            "type": "array",
            "items": {"type": "string", "maxLength": MAX_STRING_CHARS},
            "maxItems": MAX_LIST_ITEMS,
        },
    ]
}
METADATA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": _METADATA_VALUE_SCHEMA,
    "maxProperties": MAX_METADATA_KEYS,
    "description": (
        f"The integrator's attributes: at most {MAX_METADATA_KEYS} keys of 1 to 64 letters, digits, "
        f"'_', '.' or '-'; each value a string (at most {MAX_STRING_CHARS} characters), a finite number, "
        f"a boolean, or a list of at most {MAX_LIST_ITEMS} strings. Dates as ISO 8601 strings. Stored as "
        "given; search and chat filter on them."
    ),
    "example": {"customer": "4821", "year": 2024, "public": False, "products": ["kettle-k1"]},
}
ACCESS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "nullable": True,
    "properties": {
        "groups": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": MAX_GROUP_CHARS},
            "maxItems": MAX_GROUPS,
        }
    },
    "required": ["groups"],
    "additionalProperties": False,
    "description": (
        'Who may read the document: null, every end user of the workspace; {"groups": [...]}, only end '
        "users holding at least one of these groups (an empty list: no end user; an API-key request that "
        "sends no groups still sees it). Duplicates are dropped."
    ),
    "example": {"groups": ["staff"]},
}


def _raise(problems: Problems) -> None:
    # Nested by path, so that the error names metadata.price, not metadata.
    if "" in problems:
        raise serializers.ValidationError(problems[""])
    raise serializers.ValidationError(problems)


@extend_schema_field(METADATA_SCHEMA)
class MetadataField(serializers.Field):  # type: ignore[type-arg]
    """``metadata`` in a JSON body: an object (``null`` is a 400: send ``{}`` to clear)."""

    def to_internal_value(self, data: Any) -> Metadata:
        problems = metadata_problems(data)
        if problems:
            _raise(problems)
        return dict(data)

    def to_representation(self, value: Any) -> Any:
        return value if isinstance(value, dict) else {}


@extend_schema_field(ACCESS_SCHEMA)
class AccessField(serializers.Field):  # type: ignore[type-arg]
    """``access`` in a JSON body: ``null`` or ``{"groups": [...]}``."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        # null is a value here (every end user), not "not sent".
        if data is None:
            return True, None
        return super().validate_empty_values(data)

    def to_internal_value(self, data: Any) -> Access:
        problems = access_problems(data)
        if problems:
            _raise(problems)
        return access_normalize(data)

    def to_representation(self, value: Any) -> Any:
        return value


def _from_form(data: Any) -> Any:
    if not isinstance(data, str):
        raise serializers.ValidationError("Send a JSON string.")
    try:
        return json_field(data)
    except ValueError as exc:
        raise serializers.ValidationError(f"Not valid JSON: {exc}") from None


@extend_schema_field(
    {
        "type": "string",
        "description": "A JSON object, as `metadata` in a JSON body (the limits there).",
        "example": '{"customer": "4821", "year": 2024}',
    }
)
class MetadataFormField(MetadataField):
    """``metadata`` in a multipart form: the object as a JSON string."""

    def to_internal_value(self, data: Any) -> Metadata:
        return super().to_internal_value(_from_form(data))


@extend_schema_field(
    {
        "type": "string",
        "description": 'null or a JSON object {"groups": [...]}, as `access` in a JSON body.',
        "example": '{"groups": ["staff"]}',
    }
)
class AccessFormField(AccessField):
    """``access`` in a multipart form: ``null`` or the object as a JSON string."""

    def to_internal_value(self, data: Any) -> Access:
        return super().to_internal_value(_from_form(data))
