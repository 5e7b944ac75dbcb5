"""Server-sent events for a streamed turn.

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
from collections.abc import Callable, Iterator, Mapping

from django.conf import settings
from django.db import close_old_connections, connection

from chat.contract import ChatResult, ErrorData
from chat.serializers import message_data, session_summary
from chat.services.turns import (
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
Event = tuple[str, Mapping[str, object]]


def sse(event: str, data: Mapping[str, object]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


# Told the outcome of a streamed turn: (status, the chat result or None).
Finish = Callable[[int, ChatResult | None], None]


def _work(prepared: PreparedTurn, events: queue.Queue[Event | None], finish: Finish | None) -> None:
    try:
        close_old_connections()
        message = turn_existing_reply(prepared)
        if message is None:
            outcome = turn_generate(prepared, on_delta=lambda text: events.put(("delta", {"text": text})))
            close_old_connections()
            message = turn_finish(prepared, outcome)
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


def event_stream(prepared: PreparedTurn, finish: Finish | None = None) -> Iterator[bytes]:
    """Start the worker now, and return the response body: ``session``,
    [``prompt_trace``], ``delta``*, then ``message`` or ``error``.

    The worker starts here, not inside the body generator: a client that
    disconnects before the first byte is read must still get its turn stored.
    """
    _, events = start_worker(prepared, finish)
    return _drain(prepared, events)


def _drain(prepared: PreparedTurn, events: queue.Queue[Event | None]) -> Iterator[bytes]:
    question = prepared.question
    yield sse("session", session_summary(question.session, created=question.created))
    if prepared.include_trace:
        yield sse("prompt_trace", prepared.trace())
    while True:
        try:
            # While the model is silent (loading, queued behind another turn,
            # reading a long prompt), a comment line keeps proxies and clients
            # from closing the connection.
            item = events.get(timeout=settings.SSE_HEARTBEAT_SECONDS)
        except queue.Empty:
            yield b": keepalive\n\n"
            continue
        if item is None:
            return
        yield sse(*item)


def replay_stream(result: ChatResult) -> Iterator[bytes]:
    """A stored streamed turn, sent again as a stream (an Idempotency-Key replay)."""
    assistant = result["assistant_message"]
    yield sse("session", result["session"])
    yield sse("delta", {"text": assistant["content"]})
    yield sse("message", assistant)
