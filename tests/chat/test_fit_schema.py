"""``fit_schema``: the bounds that let a constrained decoder close the reply's
JSON within ``max_tokens`` (used by the local and the OpenAI-compatible
backends)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from chat.backends.base import CHARS_PER_TOKEN, MIN_STRING_LENGTH, fit_schema
from chat.backends.local import LocalBackend
from chat.output import output_schema


def longest(schema: dict[str, Any]) -> Any:
    """The longest instance a bounded schema admits (written independently of
    the code under test)."""
    if "anyOf" in schema:
        candidates = [longest(branch) for branch in schema["anyOf"]]
        return max(candidates, key=lambda value: len(json.dumps(value, separators=(",", ":"))))
    if "enum" in schema:
        return max(schema["enum"], key=lambda value: len(json.dumps(value)))
    kind = schema["type"]
    if kind == "string":
        return "x" * schema["maxLength"]
    if kind == "array":
        return [longest(schema["items"]) for _ in range(schema["maxItems"])]
    if kind == "object":
        return {key: longest(value) for key, value in schema["properties"].items()}
    if kind == "integer":
        return 99999
    if kind == "boolean":
        return False
    return None


# Below about 96 tokens even a one-field form with short strings is too long;
# the schema is then as small as it gets (and the answer still fits).
@pytest.mark.parametrize("max_tokens", [96, 128, 200, 256, 512, 1024, 2048])
def test_every_reply_the_schema_admits_fits_the_budget(max_tokens: int) -> None:
    fitted = fit_schema(output_schema(), max_tokens)
    for branch in fitted["anyOf"]:
        instance = longest(branch)
        jsonschema.validate(instance, fitted)
        assert len(json.dumps(instance, separators=(",", ":"))) <= max_tokens * CHARS_PER_TOKEN


def test_a_form_keeps_a_field_and_readable_strings() -> None:
    form = fit_schema(output_schema(), 128)["anyOf"][1]["properties"]
    assert form["fields"]["maxItems"] >= 1 and form["fields"]["minItems"] == 1
    assert form["question"]["maxLength"] >= MIN_STRING_LENGTH
    field = form["fields"]["items"]["properties"]
    assert field["type"] == output_schema()["anyOf"][1]["properties"]["fields"]["items"]["properties"]["type"]
    large = fit_schema(output_schema(), 1024)["anyOf"][1]["properties"]
    assert large["fields"]["maxItems"] == 4 and large["question"]["maxLength"] > 64


def test_answers_keep_the_bounds_they_had() -> None:
    # The answer branch is not shrunk where it already fitted (the local
    # backend's measured bounds).
    for max_tokens, items, chars in [(80, 1, 160), (128, 2, 128), (256, 4, 128), (1024, 4, 512)]:
        parts = fit_schema(output_schema(), max_tokens)["anyOf"][0]["properties"]["parts"]
        assert (parts["maxItems"], parts["items"]["properties"]["text"]["maxLength"]) == (items, chars)
    assert LocalBackend.fit_schema(output_schema(), 128) == fit_schema(output_schema(), 128)
