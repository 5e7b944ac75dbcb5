"""Server-sent events for a streamed turn: one worker, one drain loop, one
response, and a format per endpoint (the native events here, OpenAI's
chunks in ``chat.openai_api.streaming``).

The turn's generation and persistence run in a worker thread that feeds a
queue; the response only drains that queue. If the client disconnects, the
server stops iterating the response, but the worker carries on and stores the
reply, exactly as for a non-streaming call. The worker opens its own database
connection only for the final short write, and closes it when done.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol

from django.conf import settings
from django.db import close_old_connections, connection
from django.http import StreamingHttpResponse
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

from chat.contract import ChatResult, ErrorData
from chat.serializers import message_data, session_summary
from chat.services.turn import (
    PreparedTurn,
    reply_data,
    turn_error_details,
    turn_existing_reply,
    turn_finish,
    turn_generate,
)
from daneshyar.exceptions import ApplicationError

logger = logging.getLogger(__name__)


# An event name and its data: a contract shape (chat.contract) as JSON.
Event = tuple[str, Mapping[str, Any]]

# Told how a streamed turn ended: (status, the chat result or None).
Finish = Callable[[int, ChatResult | None], None]

# While the model is silent (loading, queued behind another turn, reading a
# long prompt), a comment line keeps proxies and clients from closing the
# connection.
HEARTBEAT = b": keepalive\n\n"


class StreamFormat(Protocol):
    """How an endpoint writes a streamed turn: what comes before the worker's
    events, each event, and what comes after the last one."""

    def opening(self) -> Iterable[bytes]: ...

    def encode(self, event: Event) -> Iterable[bytes]: ...

    def closing(self) -> Iterable[bytes]: ...


class EventStreamNegotiation(DefaultContentNegotiation):
    """Any ``Accept`` is fine for a stream endpoint.

    Its success response is ``text/event-stream`` (not rendered by DRF) and
    its errors before the stream opens are JSON, whatever the client asked
    for: ``Accept: text/event-stream`` (EventSource-style clients,
    httpx-sse, fetch-event-source), ``*/*``, ``application/json`` or none.
    """

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


def sse(event: str, data: Mapping[str, object]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def stream_response(body: Iterator[bytes]) -> StreamingHttpResponse:
    """The one response of every stream (a turn's, or a replay)."""
    # The charset said: without it HTTP clients (requests) read text/* as Latin-1.
    response = StreamingHttpResponse(body, content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: do not buffer the stream
    return response


def turn_stream(
    prepared: PreparedTurn, form: StreamFormat, finish: Finish | None = None
) -> StreamingHttpResponse:
    """Start the turn's worker now, and return the response that drains it.

    The worker starts here, not inside the body generator: a client that
    disconnects before the first byte is read must still get its turn stored.
    """
    _, events = start_worker(prepared, finish)
    return stream_response(drain(events, form))


def drain(events: queue.Queue[Event | None], form: StreamFormat) -> Iterator[bytes]:
    """The response body: the format's opening, the worker's events as they
    come (a heartbeat while there are none), then the format's closing."""
    yield from form.opening()
    while True:
        try:
            item = events.get(timeout=settings.SSE_HEARTBEAT_SECONDS)
        except queue.Empty:
            yield HEARTBEAT
            continue
        if item is None:
            yield from form.closing()
            return
        yield from form.encode(item)


def start_worker(
    prepared: PreparedTurn, finish: Finish | None = None
) -> tuple[threading.Thread, queue.Queue[Event | None]]:
    events: queue.Queue[Event | None] = queue.Queue()
    # Not a daemon: a shutting-down process waits for the turn to be stored.
    worker = threading.Thread(
        target=_work, args=(prepared, events, finish), name=f"chat-turn-{prepared.question.message.id}"
    )
    worker.start()
    return worker, events


def _work(prepared: PreparedTurn, events: queue.Queue[Event | None], finish: Finish | None) -> None:
    try:
        close_old_connections()
        message = turn_existing_reply(prepared)
        if message is None:
            generated = turn_generate(prepared, on_delta=lambda text: events.put(("delta", {"text": text})))
            close_old_connections()
            message = turn_finish(prepared, generated)
        reply = reply_data(prepared, message)
        events.put(("message", reply))
        if finish is not None:
            question = prepared.question
            finish(
                200,
                {
                    "session": session_summary(question.session, created=question.created),
                    "user_message": message_data(question.message),
                    "assistant_message": reply,
                },
            )
    except ApplicationError as exc:
        turn_error_details(prepared, exc)
        error: ErrorData = {"code": exc.code, "message": exc.message}
        if "session_id" in exc.details:
            error["session_id"] = exc.details["session_id"]
        events.put(("error", error))
        if finish is not None:
            finish(exc.status_code, None)
    except Exception:
        logger.exception("Streaming turn failed")
        error = {"code": "internal_error", "message": "An internal error occurred."}
        events.put(("error", error))
    finally:
        connection.close()
        events.put(None)


class NativeEvents:
    """The native stream: ``session``, [``prompt_trace``], ``delta``*, then
    ``message`` or ``error``, each event as it is."""

    def __init__(self, prepared: PreparedTurn) -> None:
        self.prepared = prepared

    def opening(self) -> Iterator[bytes]:
        question = self.prepared.question
        yield sse("session", session_summary(question.session, created=question.created))
        if self.prepared.request.include_prompt_trace:
            yield sse("prompt_trace", self.prepared.trace())

    def encode(self, event: Event) -> Iterator[bytes]:
        yield sse(*event)

    def closing(self) -> Iterator[bytes]:
        return iter(())


def replay_stream(result: ChatResult) -> Iterator[bytes]:
    """A stored streamed turn, sent again as a stream (an Idempotency-Key replay)."""
    assistant = result["assistant_message"]
    yield sse("session", result["session"])
    yield sse("delta", {"text": assistant["content"]})
    yield sse("message", assistant)
