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
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from chat.contract import (
    CHOICE_TYPES,
    FieldType,
    FormField,
    InvalidCitation,
    JsonSchema,
    Part,
    Reply,
    ResponseType,
    Source,
)
from chat.headings import is_heading
from chat.text import content_words
from languages import ENGLISH, Language
from retrieval.search import ScoredPassage

SCHEMA_NAME = "daneshyar_reply"
FIELD_TYPES = tuple(FieldType)
MAX_PARTS = 12
MAX_FIELDS = 12
MAX_OPTIONS = 20
# Longest text the server accepts in a part, and in a form's short strings
# (title, field name, label, placeholder, option).
MAX_PART_CHARS = 4000
MAX_LABEL_CHARS = 200


def _nullable(schema: JsonSchema) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def output_schema(claims: int = 0) -> JsonSchema:
    """The JSON schema of a reply (answer or form); with ``claims``, both
    shapes also carry ``claims``: one boolean per claims check, in order."""
    string = {"type": "string"}
    answer: JsonSchema = {
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
    form: JsonSchema = {
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": [ResponseType.FORM.value]},
            "question": string,
            "title": string,
            "fields": {"type": "array", "minItems": 1, "maxItems": MAX_FIELDS, "items": _field_schema()},
        },
        "required": ["type", "question", "title", "fields"],
        "additionalProperties": False,
    }
    if claims:
        checks = {"type": "array", "items": {"type": "boolean"}, "minItems": claims, "maxItems": claims}
        for shape in (answer, form):
            shape["properties"]["claims"] = checks
            shape["required"].append("claims")
    return {"anyOf": [answer, form]}


def _field_schema() -> JsonSchema:
    """A form's field: its name, label, type, whether it is required, a
    placeholder or null and a list of options or null."""
    string = {"type": "string"}
    return {
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


class InvalidOutput(ValueError):
    """The model's reply does not satisfy the contract (retry, then fall back)."""


@dataclass(frozen=True)
class ParsedReply:
    """A validated reply in API shape, plus what was dropped on the way."""

    response: Reply
    content: str
    invalid_citations: list[InvalidCitation] = field(default_factory=list)
    # The model's answers to the workspace's claims checks, in order.
    claims: list[bool] = field(default_factory=list)


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
        "page": passage.page,
        "bbox": passage.bbox,
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
        parsed = _parse_answer(data, passages)
    elif kind == ResponseType.FORM:
        parsed = _parse_form(data)
    else:
        raise InvalidOutput(f"unknown type {kind!r}")
    claims = data.get("claims")
    if isinstance(claims, list):
        # Only a JSON true counts as a "yes".
        parsed = replace(parsed, claims=[value is True for value in claims])
    return parsed


def _parse_answer(data: dict[str, Any], passages: list[ScoredPassage]) -> ParsedReply:
    raw_parts = data.get("parts")
    if not isinstance(raw_parts, list) or not raw_parts:
        raise InvalidOutput("answer without parts")
    if len(raw_parts) > MAX_PARTS:
        raise InvalidOutput(f"{len(raw_parts)} parts; at most {MAX_PARTS}")
    parts: list[Part] = []
    invalid: list[InvalidCitation] = []
    for index, part in enumerate(raw_parts):
        if not isinstance(part, dict) or not isinstance(part.get("text"), str):
            raise InvalidOutput(f"part {index} has no text")
        text = part["text"].strip()
        if not text:
            continue
        if len(text) > MAX_PART_CHARS:
            raise InvalidOutput(f"part {index} is {len(text)} characters; at most {MAX_PART_CHARS}")
        number = part.get("passage")
        source = None
        if number is not None:
            if isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= len(passages):
                source = source_of(passages[number - 1])
            else:
                invalid.append({"part": len(parts), "passage": number, "reason": "not_retrieved"})
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
    if len(raw_fields) > MAX_FIELDS:
        raise InvalidOutput(f"{len(raw_fields)} fields; at most {MAX_FIELDS}")
    if len(question.strip()) > MAX_PART_CHARS:
        raise InvalidOutput(f"the form's question is over {MAX_PART_CHARS} characters")
    fields = [_parse_field(index, item) for index, item in enumerate(raw_fields)]
    names = [f["name"] for f in fields]
    if len(set(names)) != len(names):
        raise InvalidOutput("duplicate field names")
    question = question.strip()
    form_title = title.strip() if isinstance(title, str) and title.strip() else question[:80]
    _short(form_title, "the form's title")
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
    required = item.get("required", False)
    if not isinstance(required, bool):
        # "false" would read as True: only a JSON boolean says what it means.
        raise InvalidOutput(f"field {index} required is not a boolean")
    out: FormField = {
        "name": _short(name.strip(), f"field {index} name"),
        "label": _short(label, f"field {index} label"),
        "type": FieldType(kind),
        "required": required,
    }
    placeholder = item.get("placeholder")
    if isinstance(placeholder, str) and placeholder.strip():
        out["placeholder"] = _short(placeholder.strip(), f"field {index} placeholder")
    options = item.get("options")
    if options is not None and not isinstance(options, list):
        raise InvalidOutput(f"field {index} options are not a list")
    if options is not None and len(options) > MAX_OPTIONS:
        raise InvalidOutput(f"field {index} has {len(options)} options; at most {MAX_OPTIONS}")
    stripped = [o.strip() for o in options or [] if isinstance(o, str) and o.strip()]
    clean = list(dict.fromkeys(_short(o, f"field {index} option") for o in stripped))
    if kind in CHOICE_TYPES and not clean:
        raise InvalidOutput(f"{kind} field {name!r} has no options")
    # Options mean something only for choice fields; a checkbox with options
    # is a multi-select group, without them a yes/no toggle.
    if clean and (kind in CHOICE_TYPES or kind == FieldType.CHECKBOX):
        out["options"] = clean
    return out


def _short(text: str, what: str) -> str:
    if len(text) > MAX_LABEL_CHARS:
        raise InvalidOutput(f"{what} is {len(text)} characters; at most {MAX_LABEL_CHARS}")
    return text


# A cited part must say what its passage says: when under half of its content
# words are the passage's and more are the user's (question, history), the
# citation is dropped — a real document never vouches for the user's words.
MIN_PASSAGE_SUPPORT = 0.5
MIN_WORDS_TO_JUDGE = 3


def citations_check(
    reply: ParsedReply, passages: Sequence[ScoredPassage], user_texts: Sequence[str]
) -> ParsedReply:
    """``reply`` with every citation that launders the user's text, or that
    cites a heading as if it were an answer, dropped (``source: null``,
    recorded in ``invalid_citations`` as ``from_user`` or ``heading``)."""
    if reply.response["type"] != ResponseType.ANSWER:
        return reply
    by_id = {str(p.passage_id): (number, p) for number, p in enumerate(passages, start=1)}
    user_words = content_words(" ".join(user_texts))
    parts: list[Part] = []
    invalid = list(reply.invalid_citations)
    for index, part in enumerate(reply.response["parts"]):
        source = part["source"]
        found = by_id.get(source["passage_id"]) if source is not None else None
        reason = _uncited(part["text"], found[1], user_words) if found is not None else None
        if found is not None and reason is not None:
            invalid.append({"part": index, "passage": found[0], "reason": reason})
            parts.append({"text": part["text"], "source": None})
            continue
        parts.append(part)
    response: Reply = {"type": reply.response["type"], "parts": parts, "form": reply.response["form"]}
    return ParsedReply(response, reply.content, invalid, reply.claims)


def _uncited(text: str, passage: ScoredPassage, user_words: frozenset[str]) -> str | None:
    """Why a part may not cite ``passage``: "from_user" (the user's words,
    not the passage's), "heading" (only a heading of the passage, or its
    document's title line: chat/headings.py); None when it may."""
    words = content_words(text)
    if len(words) >= MIN_WORDS_TO_JUDGE:
        from_passage = len(words & content_words(passage.text)) / len(words)
        from_user = len(words & user_words) / len(words)
        if from_passage < MIN_PASSAGE_SUPPORT and from_user > from_passage:
            return "from_user"
    if is_heading(text, text=passage.text, ordinal=passage.ordinal, title=passage.resource_title):
        return "heading"
    return None


# The English text (every language's: languages/<code>/texts.py).
FALLBACK_TEXT = ENGLISH.texts.fallback_text


def fallback_reply(language: Language = ENGLISH) -> ParsedReply:
    """The safe answer stored when generation fails validation twice, in the turn's language."""
    return text_reply(language.texts.fallback_text)


def text_reply(text: str) -> ParsedReply:
    """An answer of one uncited part: a blocked reply's safe reply, the
    workspace's no-answer and small-talk texts, the extractive engine's own."""
    response: Reply = {"type": ResponseType.ANSWER, "parts": [{"text": text, "source": None}], "form": None}
    return ParsedReply(response, text)


def safe_reply(text: str) -> ParsedReply:
    """What a blocked reply is replaced with: the workspace's safe reply."""
    return text_reply(text)
