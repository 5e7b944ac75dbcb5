"""The interfaces of the served models.

Every backend is a :class:`BaseBackend` (its id, capabilities and window).
A generative one (:class:`BaseGenerativeBackend`) turns a list of chat
messages into text that follows a JSON schema; the extractive engine
(chat/backends/extractive.py) has an ``answer`` of its own instead, and the
turn tells the two apart by ``generative``, not by their classes.
A backend knows nothing about sessions, retrieval or the database: the turn service
builds the messages and validates what comes back. Backends translate their
provider's failures into :class:`daneshyar.exceptions.LLMUnavailable` at this
boundary, so no SDK exception ever reaches a view.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

# Defined with the reply contract (the bottom of the chat app), named here
# too: they are this interface's types.
from chat.contract import ChatMessage as ChatMessage
from chat.contract import JsonSchema as JsonSchema


@dataclass(frozen=True)
class Generation:
    """A finished generation: the raw text (JSON expected) and token counts."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @staticmethod
    def ending(items: Iterator[StreamItem]) -> Generation:
        """The generation that ends a stream (its deltas read and dropped)."""
        final: Generation | None = None
        for item in items:
            if isinstance(item, Generation):
                final = item
        assert final is not None
        return final


# What ``stream`` yields: text deltas as they are produced, then exactly one
# final :class:`Generation` with the whole text and the token counts.
StreamItem = str | Generation


@dataclass(frozen=True)
class GenerationRequest:
    """One generation asked of a backend: the arguments of ``generate`` and
    ``stream``, as their implementations (``_generate``, ``_stream``) take them."""

    messages: list[ChatMessage]
    schema: JsonSchema
    max_tokens: int | None = None
    temperature: float | None = None


# Characters a token of the reply stands for, on the short side for JSON.
CHARS_PER_TOKEN = 3
# Strings are not cut below this length to make room; arrays shrink instead.
MIN_STRING_LENGTH = 24


def fit_schema(schema: JsonSchema, max_tokens: int) -> JsonSchema:
    """``schema`` with bounds that fit the token budget.

    A constrained decoder cannot close the JSON when the budget runs out,
    and a reply cut short is invalid. A small model often repeats itself
    until ``max_tokens`` (measured on vLLM with SmolLM2-135M: 3 of 6 replies
    cut without bounds; with them, 68 of 68 valid). So strings get a
    ``maxLength`` and arrays a smaller ``maxItems``, sized to roughly fill
    ``max_tokens`` (about 3 characters a token, some left for the JSON around
    them). Then each alternative of a top-level ``anyOf`` (the answer, the
    form) is checked as a whole: where its longest possible JSON is over the
    budget (a form multiplies strings: fields times name, label, options),
    its strings are shortened, down to ``MIN_STRING_LENGTH``, and then its
    arrays get fewer items, until it fits (below about 96 tokens a form
    cannot fit; it is then as small as it gets).
    """
    items = max(1, min(4, max_tokens // 48))
    chars = max(16, max_tokens * 2 // items)

    def fit(node: Any) -> Any:
        if isinstance(node, list):
            return [fit(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: fit(value) for key, value in node.items()}
        if out.get("type") == "string" and "enum" not in out:
            out["maxLength"] = min(int(out.get("maxLength", chars)), chars)
        if out.get("type") == "array":
            out["maxItems"] = min(int(out.get("maxItems", items)), items)
            out["minItems"] = min(int(out.get("minItems", 0)), out["maxItems"])
        return out

    fitted: JsonSchema = fit(schema)
    budget = max_tokens * CHARS_PER_TOKEN
    for branch in fitted.get("anyOf", [fitted]):
        _shrink_to(branch, budget)
    return fitted


def _worst_length(node: Any) -> int:
    """The longest compact JSON text ``node`` admits (bounded schemas only)."""
    if not isinstance(node, dict):
        return 8
    if "anyOf" in node:
        return max(_worst_length(branch) for branch in node["anyOf"])
    kind = node.get("type")
    if "enum" in node:
        return max(len(json.dumps(value)) for value in node["enum"])
    if kind == "string":
        # Two quotes; escapes are rare in prose and ignored.
        return int(node.get("maxLength", 10_000)) + 2
    if kind == "array":
        return 2 + int(node.get("maxItems", 100)) * (_worst_length(node.get("items")) + 1)
    if kind == "object":
        properties = node.get("properties", {})
        return 2 + sum(len(key) + 4 + _worst_length(value) for key, value in properties.items())
    return {"boolean": 5, "null": 4}.get(str(kind), 8)


def _nodes(node: Any, kind: str) -> Iterator[dict[str, Any]]:
    if isinstance(node, list):
        for item in node:
            yield from _nodes(item, kind)
    elif isinstance(node, dict):
        if node.get("type") == kind and "enum" not in node:
            yield node
        for value in node.values():
            yield from _nodes(value, kind)


def _shrink_to(branch: dict[str, Any], budget: int) -> None:
    if _worst_length(branch) <= budget:
        return
    strings = list(_nodes(branch, "string"))
    original = [int(s["maxLength"]) for s in strings]
    while True:
        # The longest cap on strings (binary search) that fits as things are.
        low, high = MIN_STRING_LENGTH, max(original, default=MIN_STRING_LENGTH)
        while low < high:
            cap = (low + high + 1) // 2
            for string, length in zip(strings, original, strict=True):
                string["maxLength"] = min(length, cap)
            if _worst_length(branch) <= budget:
                low = cap
            else:
                high = cap - 1
        for string, length in zip(strings, original, strict=True):
            string["maxLength"] = min(length, low)
        if _worst_length(branch) <= budget:
            return
        # Still too long with short strings: one item fewer in the array that
        # weighs most (a form's fields, then their options).
        arrays = [a for a in _nodes(branch, "array") if a["maxItems"] > max(1, a.get("minItems", 0))]
        if not arrays:
            return
        heaviest = max(arrays, key=lambda a: a["maxItems"] * (_worst_length(a.get("items")) + 1))
        heaviest["maxItems"] -= 1


class BaseBackend(ABC):
    """One served model, of either kind: a :class:`BaseGenerativeBackend`
    writes its reply from a prompt, the extractive engine
    (chat/backends/extractive.py) copies sentences of the retrieved passages
    with its own ``answer``. ``generative`` tells them apart, typed so that
    checking it narrows a :data:`chat.backends.Backend` to its kind.

    Instances are shared by threads: keep them stateless per call, or guard
    state with a lock."""

    backend_name: str = "base"
    # Capabilities, as GET /api/v1/models/ reports them: a generative
    # backend writes its reply (and may ask back with a form); the extractive
    # engine copies sentences.
    generative: ClassVar[bool]
    supports_forms: bool = True
    supports_streaming: bool = True
    # Tokens reserved for the reply (the ``max_tokens`` of a generation).
    max_tokens: int = 1024

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id

    def context_length(self) -> int | None:
        """The model's window in tokens (prompt and reply together), or None
        when the backend has none (it does not read a prompt).

        The turn service fits every prompt into ``context_length() -
        max_tokens - margin`` (chat/prompting.py).
        """
        return None

    def count_tokens(self, messages: list[ChatMessage]) -> int:
        """How many tokens ``messages`` take as this model's prompt.

        Backends with a tokenizer count exactly; this default estimates on the
        long side (about three characters a token, plus the chat template's
        few tokens per message), so a prompt it accepts fits.
        """
        return sum(len(m["content"]) // 3 + 8 for m in messages) + 8


class BaseGenerativeBackend(BaseBackend):
    """A model that writes its reply: messages in, text that follows a JSON
    schema out (whole, or streamed)."""

    generative: ClassVar[Literal[True]] = True

    def generate(
        self,
        messages: list[ChatMessage],
        *,
        schema: JsonSchema,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Generation:
        """Generate a complete reply constrained to ``schema``.

        ``temperature`` None means the backend's default (greedy locally);
        the turn service samples on a retry, where greedy would repeat itself.
        Raises ``LLMUnavailable`` when the backend is down, busy past its
        timeout, or timed out.
        """
        return self._generate(GenerationRequest(messages, schema, max_tokens, temperature))

    @abstractmethod
    def _generate(self, request: GenerationRequest) -> Generation:
        """:meth:`generate`, its arguments in one request."""

    def rewrite(
        self, messages: list[ChatMessage], *, schema: JsonSchema, max_tokens: int, timeout: float
    ) -> Generation | None:
        """One short, greedy generation within ``timeout`` seconds (a
        follow-up made standalone before retrieval), or None when this
        backend cannot do it that fast. The default declines; backends that
        can honour the timeout override it."""
        return None

    def stream(
        self,
        messages: list[ChatMessage],
        *,
        schema: JsonSchema,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Iterator[StreamItem]:
        """Yield text deltas, then one final :class:`Generation`."""
        return self._stream(GenerationRequest(messages, schema, max_tokens, temperature))

    def _stream(self, request: GenerationRequest) -> Iterator[StreamItem]:
        """:meth:`stream`, its arguments in one request. The default produces
        the whole text at once; real backends override it."""
        generation = self._generate(request)
        if generation.text:
            yield generation.text
        yield generation
