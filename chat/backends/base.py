"""The generation interface every backend implements.

A backend turns a list of chat messages into text that follows a JSON schema.
It knows nothing about sessions, retrieval or the database: the turn service
builds the messages and validates what comes back. Backends translate their
provider's failures into :class:`daneshyar.exceptions.LLMUnavailable` at this
boundary, so no SDK exception ever reaches a view.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, TypedDict


class ChatMessage(TypedDict):
    role: Literal["system", "user", "assistant"]
    content: str


# A JSON Schema document (the reply's structure, chat/output.py): JSON, so
# its values are of any JSON type.
JsonSchema = dict[str, Any]


@dataclass(frozen=True)
class Generation:
    """A finished generation: the raw text (JSON expected) and token counts."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


# What ``stream`` yields: text deltas as they are produced, then exactly one
# final :class:`Generation` with the whole text and the token counts.
StreamItem = str | Generation


class BaseBackend(ABC):
    """One served model. Instances are shared by threads: keep them stateless
    per call, or guard state with a lock."""

    backend_name: str = "base"
    # Capabilities, as GET /api/v1/models/ reports them: a generative
    # backend writes its reply (and may ask back with a form); the extractive
    # engine copies sentences.
    generative: bool = True
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

    @abstractmethod
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

    def stream(
        self,
        messages: list[ChatMessage],
        *,
        schema: JsonSchema,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Iterator[StreamItem]:
        """Yield text deltas, then one final :class:`Generation`.

        The default produces the whole text at once; real backends override it.
        """
        generation = self.generate(messages, schema=schema, max_tokens=max_tokens, temperature=temperature)
        if generation.text:
            yield generation.text
        yield generation
