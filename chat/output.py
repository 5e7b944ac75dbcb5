"""The model's output contract: the JSON schema it must follow, and the
server-side validation that maps its reply onto the API's ``response``.

The model writes one of::

    {"type": "answer", "parts": [{"text": "...", "passage": 2}, {"text": "...", "passage": null}]}
    {"type": "form", "question": "...", "title": "...", "fields": [{"name", "label", "type",
     "required", "placeholder", "options"}]}

``passage`` is the 1-based number of a reference passage in the prompt. Every
property is required (nullable where optional) so the same schema works with
strict structured output on vLLM / OpenAI-compatible servers and with
xgrammar locally. The schema constrains the shape; this module still checks
everything, because an OpenAI-compatible server may not enforce it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from chat.backends.base import JsonSchema
from chat.contract import (
    CHOICE_TYPES,
    FieldType,
    FormField,
    InvalidCitation,
    Part,
    Reply,
    ResponseType,
    Source,
)
from retrieval.search import ScoredPassage

SCHEMA_NAME = "daneshyar_reply"
FIELD_TYPES = tuple(FieldType)
MAX_PARTS = 12
MAX_FIELDS = 12
MAX_OPTIONS = 20


def _nullable(schema: JsonSchema) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def output_schema() -> JsonSchema:
    """The JSON schema of a reply (answer or form)."""
    string = {"type": "string"}
    answer = {
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": [ResponseType.ANSWER.value]},
            "parts": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_PARTS,
                "items": {
                    "type": "object",
                    "properties": {"text": string, "passage": _nullable({"type": "integer"})},
                    "required": ["text", "passage"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["type", "parts"],
        "additionalProperties": False,
    }
    form_field = {
        "type": "object",
        "properties": {
            "name": string,
            "label": string,
            "type": {"type": "string", "enum": [t.value for t in FieldType]},
            "required": {"type": "boolean"},
            "placeholder": _nullable(string),
            "options": _nullable({"type": "array", "items": string, "maxItems": MAX_OPTIONS}),
        },
        "required": ["name", "label", "type", "required", "placeholder", "options"],
        "additionalProperties": False,
    }
    form = {
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": [ResponseType.FORM.value]},
            "question": string,
            "title": string,
            "fields": {"type": "array", "minItems": 1, "maxItems": MAX_FIELDS, "items": form_field},
        },
        "required": ["type", "question", "title", "fields"],
        "additionalProperties": False,
    }
    return {"anyOf": [answer, form]}


class InvalidOutput(ValueError):
    """The model's reply does not satisfy the contract (retry, then fall back)."""


@dataclass
class ParsedReply:
    """A validated reply in API shape, plus what was dropped on the way."""

    response: Reply
    content: str
    invalid_citations: list[InvalidCitation] = field(default_factory=list)


def render_content(texts: list[str]) -> str:
    """Plain-text rendering of parts: joined with a space unless a part
    already ends (or the next begins) with whitespace."""
    return _render(texts)[0].strip()


def part_spans(texts: list[str]) -> list[tuple[int, int]]:
    """Where each part stands in :func:`render_content`'s text (start, end)."""
    rendered, spans = _render(texts)
    lead = len(rendered) - len(rendered.lstrip())
    return [(start - lead, end - lead) for start, end in spans]


def _render(texts: list[str]) -> tuple[str, list[tuple[int, int]]]:
    out = ""
    spans: list[tuple[int, int]] = []
    for text in texts:
        if out and text and not out[-1].isspace() and not text[0].isspace():
            out += " "
        spans.append((len(out), len(out) + len(text)))
        out += text
    return out, spans


def source_of(passage: ScoredPassage) -> Source:
    return {
        "resource_id": str(passage.resource_id),
        "resource_title": passage.resource_title,
        "passage_id": str(passage.passage_id),
    }


def parse_reply(raw: str, passages: list[ScoredPassage]) -> ParsedReply:
    """Validate ``raw`` against the contract and map passage numbers to sources.

    A citation to a passage number that was not in the prompt keeps its text,
    gets ``source: null`` and is recorded in ``invalid_citations``.
    """
    try:
        data = json.loads(raw)
    except (TypeError, ValueError) as exc:
        raise InvalidOutput(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise InvalidOutput("not a JSON object")
    kind = data.get("type")
    if kind == ResponseType.ANSWER:
        return _parse_answer(data, passages)
    if kind == ResponseType.FORM:
        return _parse_form(data)
    raise InvalidOutput(f"unknown type {kind!r}")


def _parse_answer(data: dict[str, Any], passages: list[ScoredPassage]) -> ParsedReply:
    raw_parts = data.get("parts")
    if not isinstance(raw_parts, list) or not raw_parts:
        raise InvalidOutput("answer without parts")
    parts: list[Part] = []
    invalid: list[InvalidCitation] = []
    for index, part in enumerate(raw_parts):
        if not isinstance(part, dict) or not isinstance(part.get("text"), str):
            raise InvalidOutput(f"part {index} has no text")
        text = part["text"].strip()
        if not text:
            continue
        number = part.get("passage")
        source = None
        if number is not None:
            if isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= len(passages):
                source = source_of(passages[number - 1])
            else:
                invalid.append({"part": len(parts), "passage": number})
        parts.append({"text": text, "source": source})
    if not parts:
        raise InvalidOutput("every part is empty")
    response: Reply = {"type": ResponseType.ANSWER, "parts": parts, "form": None}
    return ParsedReply(response, render_content([p["text"] for p in parts]), invalid)


def _parse_form(data: dict[str, Any]) -> ParsedReply:
    question = data.get("question")
    title = data.get("title")
    raw_fields = data.get("fields")
    if not isinstance(question, str) or not question.strip():
        raise InvalidOutput("form without a question")
    if not isinstance(raw_fields, list) or not raw_fields:
        raise InvalidOutput("form without fields")
    fields = [_parse_field(index, item) for index, item in enumerate(raw_fields)]
    names = [f["name"] for f in fields]
    if len(set(names)) != len(names):
        raise InvalidOutput("duplicate field names")
    question = question.strip()
    form_title = title.strip() if isinstance(title, str) and title.strip() else question[:80]
    response: Reply = {
        "type": ResponseType.FORM,
        "parts": [{"text": question, "source": None}],
        "form": {"title": form_title, "fields": fields},
    }
    return ParsedReply(response, question)


def _parse_field(index: int, item: Any) -> FormField:
    if not isinstance(item, dict):
        raise InvalidOutput(f"field {index} is not an object")
    name = item.get("name")
    kind = item.get("type")
    if not isinstance(name, str) or not name.strip():
        raise InvalidOutput(f"field {index} has no name")
    if kind not in FIELD_TYPES:
        raise InvalidOutput(f"field {index} has unknown type {kind!r}")
    label = item.get("label")
    label = label.strip() if isinstance(label, str) and label.strip() else name.strip()
    out: FormField = {
        "name": name.strip(),
        "label": label,
        "type": FieldType(kind),
        "required": bool(item.get("required", False)),
    }
    placeholder = item.get("placeholder")
    if isinstance(placeholder, str) and placeholder.strip():
        out["placeholder"] = placeholder.strip()
    options = item.get("options")
    if options is not None and not isinstance(options, list):
        raise InvalidOutput(f"field {index} options are not a list")
    clean = list(dict.fromkeys(o.strip() for o in options or [] if isinstance(o, str) and o.strip()))
    if kind in CHOICE_TYPES and not clean:
        raise InvalidOutput(f"{kind} field {name!r} has no options")
    # Options mean something only for choice fields; a checkbox with options
    # is a multi-select group, without them a yes/no toggle.
    if clean and (kind in CHOICE_TYPES or kind == FieldType.CHECKBOX):
        out["options"] = clean
    return out


FALLBACK_TEXT = (
    "Sorry, I could not put together a proper answer this time. Please try again or rephrase the question."
)


def fallback_reply() -> ParsedReply:
    """The safe answer stored when generation fails validation twice."""
    response: Reply = {
        "type": ResponseType.ANSWER,
        "parts": [{"text": FALLBACK_TEXT, "source": None}],
        "form": None,
    }
    return ParsedReply(response, FALLBACK_TEXT)
