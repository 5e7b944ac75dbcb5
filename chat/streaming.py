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
from collections.abc import Iterator, Mapping

from django.conf import settings
from django.db import close_old_connections, connection

from chat.contract import ErrorData
from chat.serializers import session_summary
from chat.services.turns import PreparedTurn, reply_data, turn_error_details, turn_finish, turn_generate
from daneshyar.exceptions import ApplicationError

logger = logging.getLogger(__name__)


# An event name and its data: a contract shape (chat.contract) as JSON.
Event = tuple[str, Mapping[str, object]]


def sse(event: str, data: Mapping[str, object]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _work(prepared: PreparedTurn, events: queue.Queue[Event | None]) -> None:
    try:
        outcome = turn_generate(prepared, on_delta=lambda text: events.put(("delta", {"text": text})))
        close_old_connections()
        message = turn_finish(prepared, outcome)
        events.put(("message", reply_data(prepared, message)))
    except ApplicationError as exc:
        turn_error_details(prepared, exc)
        error: ErrorData = {"code": exc.code, "message": exc.message}
        if "session_id" in exc.details:
            error["session_id"] = exc.details["session_id"]
        events.put(("error", error))
    except Exception:
        logger.exception("Streaming turn failed")
        error = {"code": "internal_error", "message": "An internal error occurred."}
        events.put(("error", error))
    finally:
        connection.close()
        events.put(None)


def start_worker(prepared: PreparedTurn) -> tuple[threading.Thread, queue.Queue[Event | None]]:
    events: queue.Queue[Event | None] = queue.Queue()
    # Not a daemon: a shutting-down process waits for the turn to be stored.
    worker = threading.Thread(
        target=_work, args=(prepared, events), name=f"chat-turn-{prepared.question.message.id}"
    )
    worker.start()
    return worker, events


def event_stream(prepared: PreparedTurn) -> Iterator[bytes]:
    """Start the worker now, and return the response body: ``session``,
    [``prompt_trace``], ``delta``*, then ``message`` or ``error``.

    The worker starts here, not inside the body generator: a client that
    disconnects before the first byte is read must still get its turn stored.
    """
    _, events = start_worker(prepared)
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
