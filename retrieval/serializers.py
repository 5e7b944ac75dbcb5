"""Request fields for who may read what (retrieval/filters.py): ``filters``
and ``groups``, on search and on every chat entrance; and a passage's
``bbox``, wherever one is shown."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from retrieval.filter_grammar import filters_parse, groups_parse
from retrieval.filters import Access


class FiltersField(serializers.JSONField):
    """``filters``: OpenAI's file-search filter shape (retrieval/filter_grammar.py),
    checked by :func:`filters_parse`, which names the path of a bad node."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        kwargs.setdefault(
            "help_text",
            'Only passages of documents whose metadata match: a comparison {"type": "eq"|"ne"|"gt"|"gte"|'
            '"lt"|"lte"|"in"|"nin", "key", "value"} or a compound {"type": "and"|"or", "filters": [...]}, '
            "nested at most 8 deep. A key no document has matches nothing (docs/retrieval.md, Filters).",
        )
        super().__init__(**kwargs)


class GroupsField(serializers.JSONField):
    """``groups``: the end user's groups, on an API-key request (retrieval/filter_grammar.py)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        kwargs.setdefault(
            "help_text",
            "The end user's groups (API keys only): only documents open to all or to one of these groups. "
            "Omitted: every document. An end-user token carries its own and cannot send them.",
        )
        super().__init__(**kwargs)


def bbox_field() -> serializers.ListField:
    """A passage's ``bbox`` (contract v1.4), on search results, passages and sources."""
    return serializers.ListField(
        child=serializers.FloatField(),
        min_length=4,
        max_length=4,
        allow_null=True,
        help_text="Where the passage sits on its page: [x0, y0, x1, y1], page-relative 0 to 1, "
        "origin top left; null where unknown (known for text read by OCR, docs/ocr.md).",
    )


def access_of(data: dict[str, Any]) -> Access:
    """The access a validated body's ``filters`` and ``groups`` ask for (400 naming a bad node)."""
    filters = data.get("filters")
    groups = data.get("groups")
    return Access(
        filters=filters_parse(filters) if filters is not None else None,
        groups=groups_parse(groups) if groups is not None else None,
    )
