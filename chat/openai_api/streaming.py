"""The OpenAI-compatible stream: the turn's events (chat.streaming) as
``chat.completion.chunk`` data lines, ending with ``data: [DONE]``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.http import StreamingHttpResponse
from rest_framework.response import Response

from chat.models import Message
from chat.openai_api import shapes
from chat.services.turn import PreparedTurn
from chat.streaming import Event, stream_response

DONE = b"data: [DONE]\n\n"

# What a streamed completion is stored as, for an Idempotency-Key replay.
STREAM_REPLAY = "daneshyar.stream_replay"


class CompletionChunks:
    """chat.completion.chunk events from the turn's worker (which stores the
    reply whether or not the client is still reading), then ``[DONE]``.

    The chunks' content adds up to the completion's: where the reply's text
    goes on past what was streamed (a form's options, numbered after its
    question: chat/services/turn/clarify.py), the rest is one more chunk
    before the last."""

    def __init__(self, prepared: PreparedTurn, created: int, *, include_usage: bool) -> None:
        self.prepared = prepared
        self.created = created
        self.include_usage = include_usage
        self.question_id = prepared.question.message.id
        # The requested model, until the reply names the one that answered.
        self.model = prepared.plan.model_id
        self.streamed = ""

    def chunk(self, delta: dict[str, Any], **kwargs: Any) -> bytes:
        return shapes.chunk(
            question_id=self.question_id, created=self.created, model=self.model, delta=delta, **kwargs
        )

    def opening(self) -> Iterator[bytes]:
        yield self.chunk({"role": "assistant", "content": ""})

    def encode(self, event: Event) -> Iterator[bytes]:
        name, data = event
        if name == "delta":
            self.streamed += data["text"]
            yield self.chunk({"content": data["text"]})
        elif name == "message":
            yield from self._final(data)
        elif name == "error":
            yield self._error(data)

    def closing(self) -> Iterator[bytes]:
        yield DONE

    def _final(self, message: Any) -> Iterator[bytes]:
        self.model = message.get("model") or self.model
        content = message.get("content") or ""
        if len(content) > len(self.streamed) and content.startswith(self.streamed):
            yield self.chunk({"content": content[len(self.streamed) :]})
        yield self.chunk(
            {},
            finish_reason="stop",
            extra={"daneshyar": shapes.daneshyar_object(self.prepared.question.session.id, message)},
        )
        if self.include_usage:
            tokens = Message.objects.filter(id=message["id"]).values_list(
                "prompt_tokens", "completion_tokens"
            )
            prompt_tokens, completion_tokens = tokens.first() or (None, None)
            yield shapes.data_line(
                {
                    "id": shapes.completion_id(self.question_id),
                    "object": shapes.OBJECT_CHUNK,
                    "created": self.created,
                    "model": self.model,
                    "choices": [],
                    "usage": shapes.usage(prompt_tokens, completion_tokens),
                }
            )

    def _error(self, data: Any) -> bytes:
        code = data.get("code")
        status = 503 if code == "llm_unavailable" else 502 if code == "llm_error" else 500
        error = shapes.error_object(status, data["code"], data["message"], None)
        if "session_id" in data:
            error["error"]["session_id"] = data["session_id"]
        return shapes.data_line(error)


def completion_replay(stored: Response) -> Response | StreamingHttpResponse:
    """A stored completion, sent again: as chunks when it was streamed."""
    body = stored.data
    if not isinstance(body, dict) or body.get("object") != STREAM_REPLAY:
        return stored
    choice = body["choices"][0]

    def chunk(delta: dict[str, Any], **kwargs: Any) -> bytes:
        return shapes.chunk(
            question_id=body["id"].removeprefix("chatcmpl-"),
            created=body["created"],
            model=body["model"],
            delta=delta,
            **kwargs,
        )

    def chunks() -> Iterator[bytes]:
        yield chunk({"role": "assistant", "content": ""})
        yield chunk({"content": choice["message"]["content"]})
        yield chunk({}, finish_reason="stop", extra={"daneshyar": body["daneshyar"]})
        yield DONE

    response = stream_response(chunks())
    response["Idempotent-Replayed"] = "true"
    return response
