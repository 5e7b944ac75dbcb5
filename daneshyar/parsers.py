"""JSON bodies with a nesting limit.

Python's ``json`` decoder recurses once per level: a body nested about a
thousand deep raised ``RecursionError`` (a 500), and one a little shallower
would fail later in whatever walks it. No body of this API nests deeper
than a handful of levels, so anything past :data:`MAX_JSON_DEPTH` is a 400.
"""

from __future__ import annotations

import json
from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError

MAX_JSON_DEPTH = 64
TOO_DEEP = f"JSON nested deeper than {MAX_JSON_DEPTH} levels."


def json_depth_check(data: Any) -> Any:
    """``data`` itself, or :class:`ParseError` when its arrays and objects
    nest deeper than :data:`MAX_JSON_DEPTH` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > MAX_JSON_DEPTH:
            raise ParseError(TOO_DEEP)
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return data


def json_loads(text: str | bytes) -> Any:
    """``json.loads`` with the nesting limit (ValueError for malformed JSON, as json's own)."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise ParseError(TOO_DEEP) from None
    return json_depth_check(data)


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser with the nesting limit (DEFAULT_PARSER_CLASSES)."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(TOO_DEEP) from None
        return json_depth_check(data)
