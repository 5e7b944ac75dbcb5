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

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id

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
