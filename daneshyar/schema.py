"""OpenAPI helpers: describe the envelope around a serializer."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers


def envelope(name: str, data: Any) -> Any:
    return inline_serializer(name=f"{name}Envelope", fields={"status": serializers.CharField(), "data": data})


def list_envelope(name: str, item_serializer: Any) -> Any:
    item = item_serializer(many=True) if isinstance(item_serializer, type) else item_serializer
    return envelope(
        name,
        inline_serializer(
            name=f"{name}Page",
            fields={"items": item, "next_cursor": serializers.CharField(allow_null=True)},
        ),
    )
