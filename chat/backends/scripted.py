"""A test double: replies from a script, instantly.

Used by the API tests and by ``bench/chat_overhead`` (a zero-latency
generation, so that what is measured is the server's own work). Install it
with :func:`chat.backends.use_backend`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from chat.backends.base import BaseGenerativeBackend, Generation, GenerationRequest, StreamItem
from chat.contract import ChatMessage, JsonSchema
from daneshyar.exceptions import LLMUnavailable

# A reply: the raw text, an exception to raise, or a function of the messages.
Reply = str | Exception | Callable[[list[ChatMessage]], str]

DEFAULT_REPLY = '{"type":"answer","parts":[{"text":"Scripted answer.","passage":null}]}'


class ScriptedBackend(BaseGenerativeBackend):
    backend_name = "scripted"

    def __init__(
        self,
        replies: list[Reply] | None = None,
        *,
        default: Reply = DEFAULT_REPLY,
        chunk_size: int = 7,
        model_id: str = "scripted",
        context_length: int | None = None,
        first_token_delay: float = 0.0,
        rewrites: list[str | Exception] | None = None,
    ) -> None:
        super().__init__(model_id)
        # A window makes the turn service fit prompts to it (counted with the
        # base class's estimate); None, like a model without one, fits all.
        self.window = context_length
        # Seconds before the first streamed chunk (a model reading a long prompt).
        self.first_token_delay = first_token_delay
        self.replies: list[Reply] = list(replies or [])
        # What a follow-up's rewrite call returns (the question, or an error
        # such as a timeout), in order; none scripted: the backend declines to
        # rewrite, as one that cannot keep the timeout does.
        self.rewrites: list[str | Exception] = list(rewrites or [])
        self.rewrite_calls: list[list[ChatMessage]] = []
        self.default = default
        self.chunk_size = chunk_size
        # Every call's messages, schema and max_tokens, for assertions.
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        # Set by tests that need generation to wait (e.g. a client that
        # disconnects mid-stream); cleared means "block here".
        self.gate = threading.Event()
        self.gate.set()

    def context_length(self) -> int | None:
        return self.window

    def rewrite(
        self, messages: list[ChatMessage], *, schema: JsonSchema, max_tokens: int, timeout: float
    ) -> Generation | None:
        with self._lock:
            self.rewrite_calls.append(messages)
            if not self.rewrites:
                return None
            scripted = self.rewrites.pop(0)
        if isinstance(scripted, Exception):
            raise scripted
        return Generation(text=json.dumps({"question": scripted}))

    def _next(self, request: GenerationRequest) -> str:
        with self._lock:
            self.calls.append(
                {
                    "messages": list(request.messages),
                    "schema": request.schema,
                    "max_tokens": request.max_tokens,
                    "temperature": request.temperature,
                }
            )
            reply = self.replies.pop(0) if self.replies else self.default
        if isinstance(reply, Exception):
            raise reply
        if callable(reply):
            return reply(request.messages)
        return reply

    def _generate(self, request: GenerationRequest) -> Generation:
        text = self._next(request)
        return Generation(
            text=text,
            prompt_tokens=sum(len(m["content"]) for m in request.messages) // 4,
            completion_tokens=max(1, len(text) // 4),
        )

    def _stream(self, request: GenerationRequest) -> Iterator[StreamItem]:
        text = self._next(request)
        if self.first_token_delay:
            time.sleep(self.first_token_delay)
        for start in range(0, len(text), self.chunk_size):
            if start and not self.gate.wait(timeout=30):
                raise LLMUnavailable("The scripted backend was never released.")
            yield text[start : start + self.chunk_size]
        yield Generation(text=text, prompt_tokens=None, completion_tokens=max(1, len(text) // 4))
