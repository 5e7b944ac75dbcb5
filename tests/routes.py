"""The API's routes as the URLconf holds them, for the tests that walk every
one (tests/test_matrix.py, tests/workspaces/test_access.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.views import APIView


def _walk(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, type[APIView]]]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            view = getattr(entry.callback, "view_class", None)
            if isinstance(view, type) and issubclass(view, APIView):
                yield prefix + str(entry.pattern), view


def api_views() -> list[tuple[str, type[APIView]]]:
    """Each DRF view under ``api/v1/`` with its route's pattern, in URLconf order."""
    return [
        (pattern, view)
        for pattern, view in _walk(get_resolver().url_patterns)
        if pattern.startswith("api/v1/")
    ]
