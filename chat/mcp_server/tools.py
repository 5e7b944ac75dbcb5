"""The MCP tools' declarations: each tool's name, description and strict
input schema (``additionalProperties: false``), and the serializer that
checks its arguments with the REST routes' own fields, so that a bad
argument is refused with the same ``validation_error`` and field messages
as ``POST …/search/`` or ``POST …/chat/``. docs/mcp.md lists them."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from django.conf import settings
from rest_framework import serializers

from chat.serializers import ExternalUserIdField
from daneshyar.api import DEFAULT_LIMIT, MAX_LIMIT, StringField, UUIDField
from daneshyar.exceptions import ValidationFailed, flatten_fields
from retrieval.serializers import FiltersField, GroupsField

MAX_TOP_K = 50
MAX_RESOURCE_IDS = 20
MAX_MESSAGE_CHARS = 32_000
MAX_NEIGHBOURS = 5

_UUID = {"type": "string", "format": "uuid"}
_FILTERS = {
    "type": ["object", "null"],
    "description": (
        "Metadata filter in OpenAI's file-search shape: "
        '{"type": "eq"|"ne"|"gt"|"gte"|"lt"|"lte"|"in"|"nin", "key", "value"} or '
        '{"type": "and"|"or", "filters": [...]}, nested at most 8 deep.'
    ),
}
_GROUPS = {
    "type": ["array", "null"],
    "items": {"type": "string"},
    "description": "The end user's groups (API keys only; an end-user token's own apply and cannot be sent).",
}
_RESOURCE_IDS = {
    "type": "array",
    "items": _UUID,
    "maxItems": MAX_RESOURCE_IDS,
    "description": "Also draw from these documents (the best passages of each are added).",
}


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _query_schema() -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": settings.MAX_QUERY_CHARS}


_READ_ONLY = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
# answer stores the turn in the end user's session; it deletes nothing.
_WRITES = types.ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)


def _search_tool() -> types.Tool:
    properties = {
        "query": _query_schema(),
        "top_k": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K},
        "filters": _FILTERS,
        "groups": _GROUPS,
        "resource_ids": _RESOURCE_IDS,
    }
    return types.Tool(
        name="search",
        description="The workspace's passages closest to `query` (hybrid dense and lexical search, "
        "the retrieval chat uses), best first: title, passage id, page, bbox, score and the document's "
        "metadata.",
        input_schema=_schema(properties, ["query"]),
        annotations=_READ_ONLY,
    )


def _answer_tool() -> types.Tool:
    properties = {
        "message": {"type": "string", "minLength": 1, "maxLength": MAX_MESSAGE_CHARS},
        "external_user_id": {
            "type": "string",
            "minLength": 1,
            "maxLength": 255,
            "description": "The end user (required with an API key; a token's own otherwise).",
        },
        "session_id": {**_UUID, "description": "Continue this session (omitted: a new one)."},
        "filters": _FILTERS,
        "groups": _GROUPS,
        "resource_ids": _RESOURCE_IDS,
        "certificate": {"type": "boolean", "description": "Sign the reply (GET /certificates/keys)."},
    }
    return types.Tool(
        name="answer",
        description="A cited answer from the workspace's documents: one chat turn, in a new session or "
        "in `session_id`. Returns the reply's parts, their sources and, when asked, its certificate.",
        input_schema=_schema(properties, ["message"]),
        annotations=_WRITES,
    )


def _list_documents_tool() -> types.Tool:
    properties = {
        "cursor": {"type": "string", "maxLength": 1000, "description": "A page's `next_cursor`."},
        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT},
        "filters": _FILTERS,
        "groups": _GROUPS,
    }
    return types.Tool(
        name="list_documents",
        description="The documents the caller may read, oldest first, a page at a time (`next_cursor`).",
        input_schema=_schema(properties, []),
        annotations=_READ_ONLY,
    )


def _read_passage_tool() -> types.Tool:
    properties = {
        "passage_id": {**_UUID, "description": "A passage id from `search`."},
        "neighbours": {"type": "integer", "minimum": 0, "maximum": MAX_NEIGHBOURS, "default": 1},
        "groups": _GROUPS,
    }
    return types.Tool(
        name="read_passage",
        description="One passage with up to `neighbours` passages of its document on each side, in order.",
        input_schema=_schema(properties, ["passage_id"]),
        annotations=_READ_ONLY,
    )


def tool_list() -> list[types.Tool]:
    """Every tool, as ``tools/list`` answers (the schemas read the settings now)."""
    return [_search_tool(), _answer_tool(), _list_documents_tool(), _read_passage_tool()]


class SearchArguments(serializers.Serializer[Any]):
    query = StringField()
    top_k = serializers.IntegerField(required=False, min_value=1, max_value=MAX_TOP_K)
    filters = FiltersField()
    groups = GroupsField()
    resource_ids = serializers.ListField(child=UUIDField(), required=False, max_length=MAX_RESOURCE_IDS)

    def validate_query(self, value: str) -> str:
        if len(value) > settings.MAX_QUERY_CHARS:
            raise serializers.ValidationError(
                f"Ensure this field has no more than {settings.MAX_QUERY_CHARS} characters."
            )
        return value


class AnswerArguments(serializers.Serializer[Any]):
    message = StringField(min_length=1, max_length=MAX_MESSAGE_CHARS, trim_whitespace=False)
    external_user_id = ExternalUserIdField(trim_whitespace=False)
    session_id = UUIDField(required=False, allow_null=True)
    filters = FiltersField()
    groups = GroupsField()
    resource_ids = serializers.ListField(child=UUIDField(), required=False, max_length=MAX_RESOURCE_IDS)
    certificate = serializers.BooleanField(required=False, default=False)

    def validate_message(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("The message is empty.")
        return value


class ListDocumentsArguments(serializers.Serializer[Any]):
    cursor = StringField(required=False, allow_blank=True, max_length=1000)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=MAX_LIMIT, default=DEFAULT_LIMIT)
    filters = FiltersField()
    groups = GroupsField()


class ReadPassageArguments(serializers.Serializer[Any]):
    passage_id = UUIDField()
    neighbours = serializers.IntegerField(required=False, min_value=0, max_value=MAX_NEIGHBOURS, default=1)
    groups = GroupsField()


ARGUMENTS: dict[str, type[serializers.Serializer[Any]]] = {
    "search": SearchArguments,
    "answer": AnswerArguments,
    "list_documents": ListDocumentsArguments,
    "read_passage": ReadPassageArguments,
}


def arguments_parse(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The validated arguments of tool ``name`` (400 ``validation_error``
    naming each bad or unknown argument, as the REST routes name fields)."""
    serializer = ARGUMENTS[name](data=arguments)
    valid = serializer.is_valid()
    fields = {} if valid else flatten_fields(serializer.errors)
    for key in sorted(set(arguments) - set(serializer.fields)):
        fields[str(key)[:100]] = ["Unknown argument."]
    if fields:
        raise ValidationFailed("The request has invalid fields.", fields=fields)
    return dict(serializer.validated_data)
