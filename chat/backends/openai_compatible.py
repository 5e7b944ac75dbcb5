"""OpenAI-compatible servers (vLLM first of all) through the official SDK.

Structured output uses ``response_format={"type": "json_schema", ...}``,
which vLLM enforces with its guided-decoding backend (xgrammar by default).
Every SDK or transport failure is translated here into ``LLMUnavailable``
(503 ``llm_unavailable``): no ``openai`` exception leaves this module.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import openai
from django.conf import settings

from chat.backends.base import BaseBackend, ChatMessage, Generation, JsonSchema, StreamItem
from chat.output import SCHEMA_NAME
from daneshyar.exceptions import LLMUnavailable

logger = logging.getLogger(__name__)


class OpenAIBackend(BaseBackend):
    backend_name = "openai"

    def __init__(
        self,
        model_id: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        max_tokens: int | None = None,
    ) -> None:
        super().__init__(model_id)
        self.max_tokens = max_tokens or settings.OPENAI_MAX_TOKENS
        # One client per backend: it pools HTTP connections and is thread-safe.
        self._client = openai.OpenAI(
            base_url=base_url or settings.OPENAI_BASE_URL,
            api_key=api_key or settings.OPENAI_API_KEY,
            timeout=timeout or settings.OPENAI_TIMEOUT_SECONDS,
            max_retries=settings.OPENAI_MAX_RETRIES if max_retries is None else max_retries,
        )

    def request(
        self,
        messages: list[ChatMessage],
        schema: JsonSchema,
        max_tokens: int | None,
        temperature: float | None = None,
    ) -> dict[str, Any]:
        """The ``chat.completions.create`` arguments (without ``stream``)."""
        arguments: dict[str, Any] = {
            "model": self.model_id,
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": SCHEMA_NAME, "schema": schema, "strict": True},
            },
            "max_tokens": max_tokens or self.max_tokens,
        }
        if temperature is not None:
            arguments["temperature"] = temperature
        return arguments

    def generate(
        self,
        messages: list[ChatMessage],
        *,
        schema: JsonSchema,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Generation:
        try:
            completion = self._client.chat.completions.create(
                **self.request(messages, schema, max_tokens, temperature)
            )
        except openai.OpenAIError as exc:
            raise _unavailable(exc) from exc
        text = ""
        if completion.choices:
            text = completion.choices[0].message.content or ""
        usage = completion.usage
        return Generation(
            text=text,
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
        )

    def stream(
        self,
        messages: list[ChatMessage],
        *,
        schema: JsonSchema,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Iterator[StreamItem]:
        try:
            chunks = self._client.chat.completions.create(
                **self.request(messages, schema, max_tokens, temperature),
                stream=True,
                stream_options={"include_usage": True},
            )
        except openai.OpenAIError as exc:
            raise _unavailable(exc) from exc
        parts: list[str] = []
        prompt_tokens: int | None = None
        completion_tokens: int | None = None
        try:
            iterator = iter(chunks)
            while True:
                try:
                    chunk = next(iterator)
                except StopIteration:
                    break
                except Exception as exc:
                    # The SDK and its HTTP transport raise several families
                    # mid-stream (API errors, read timeouts, broken SSE).
                    raise _unavailable(exc) from exc
                if chunk.usage is not None:
                    prompt_tokens = chunk.usage.prompt_tokens
                    completion_tokens = chunk.usage.completion_tokens
                if chunk.choices:
                    delta = chunk.choices[0].delta.content
                    if delta:
                        parts.append(delta)
                        yield delta
        finally:
            chunks.close()
        yield Generation(
            text="".join(parts), prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )


def _unavailable(exc: Exception) -> LLMUnavailable:
    status = getattr(exc, "status_code", None)
    logger.warning("Generation server failed: %s (status %s)", type(exc).__name__, status)
    if isinstance(exc, openai.APITimeoutError):
        return LLMUnavailable("The generation backend timed out. Try again.")
    return LLMUnavailable()
