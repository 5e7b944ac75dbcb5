"""The protocol's Streamable HTTP transport, the official SDK's, driven from
a Django view: the request becomes an ASGI call to the SDK's session manager
in stateless, JSON-response mode, and its answer the view's response.

Stateless: each HTTP request is a whole exchange (no session is kept
between requests, so a client opening many sessions holds nothing on the
server), and JSON responses rather than an event stream, so a gunicorn
worker thread serves a request as it serves any other. The session a client
names to continue a conversation is the chat session (``answer``'s
``session_id``), kept in the database like every other.

The SDK is asynchronous, the tools are not (the ORM, the search): the SDK
runs on one event loop per process, on a thread of its own started at the
first request, and each tool call comes back to the request's thread, which
waits for its answer meanwhile (``RequestThread``). So a tool runs with the
request's database connection and context, as a view does, and no request
pays for an event loop and a thread of its own (asgiref's ``async_to_sync``
starts both per call, about 0.8 ms)."""

from __future__ import annotations

import asyncio
import os
import queue
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
from django.conf import settings
from django.http import HttpRequest
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

T = TypeVar("T")


class RequestThread:
    """The request's thread, lent to the event loop: ``run`` (awaited on the
    loop) has a function called in the request's thread, which ``serve_until``
    keeps busy with such calls until the loop's work is done."""

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = queue.SimpleQueue()

    async def run(self, function: Callable[[], T]) -> T:
        future: Future[T] = Future()
        self._calls.put((future, function))
        return await asyncio.wrap_future(future)

    def serve_until(self, done: Future[T]) -> T:
        done.add_done_callback(lambda _: self._calls.put(None))
        while (call := self._calls.get()) is not None:
            future, function = call
            if not future.set_running_or_notify_cancel():
                continue  # the coroutine that asked gave up (cancelled)
            try:
                future.set_result(function())
            except BaseException as exc:  # the awaiting coroutine raises it
                future.set_exception(exc)
        return done.result()


_loop_lock = threading.Lock()
_loop: tuple[int, asyncio.AbstractEventLoop] | None = None


def event_loop() -> asyncio.AbstractEventLoop:
    """This process's loop for the SDK, started on first use (and again in
    a process forked from one that had it: threads do not survive a fork)."""
    global _loop
    with _loop_lock:
        if _loop is None or _loop[0] != os.getpid() or _loop[1].is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="mcp-event-loop", daemon=True).start()
            _loop = (os.getpid(), loop)
        return _loop[1]


@dataclass
class AsgiReply:
    """What the SDK answered: the status, the headers, the body."""

    status: int = 500
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""


def asgi_scope(request: HttpRequest) -> dict[str, Any]:
    """The ASGI HTTP scope of a Django request (its headers as sent)."""
    headers = [
        (name.lower().encode("latin-1"), value.encode("latin-1", errors="replace"))
        for name, value in request.headers.items()
    ]
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": request.method or "GET",
        "scheme": request.scheme or "http",
        "path": request.path,
        "raw_path": request.path.encode("utf-8"),
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1", errors="replace"),
        "root_path": "",
        "headers": headers,
        "server": (request.META.get("SERVER_NAME", "localhost"), int(request.META.get("SERVER_PORT") or 80)),
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
    }


async def _serve(server: Server[Any], scope: dict[str, Any], body: bytes) -> AsgiReply:
    reply = AsgiReply()
    chunks: list[bytes] = []
    answered = anyio.Event()
    received = False

    async def receive() -> dict[str, Any]:
        nonlocal received
        if not received:
            received = True
            return {"type": "http.request", "body": body, "more_body": False}
        await answered.wait()  # the client "disconnects" once it has its answer
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            reply.status = int(message["status"])
            reply.headers = [
                (k.decode("latin-1"), v.decode("latin-1")) for k, v in message.get("headers", [])
            ]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                answered.set()

    manager = StreamableHTTPSessionManager(
        app=server,
        json_response=True,
        stateless=True,
        max_request_body_size=settings.MAX_JSON_BODY_BYTES,
    )
    try:
        async with manager.run():
            await manager.handle_request(scope, receive, send)
    finally:
        answered.set()
    reply.body = b"".join(chunks)
    return reply


def serve(
    server_for: Callable[[Callable[[Callable[[], Any]], Awaitable[Any]]], Server[Any]],
    request: HttpRequest,
    body: bytes,
) -> AsgiReply:
    """``request`` answered through the SDK's transport by the server that
    ``server_for(run)`` builds, whose tools do their synchronous work through
    ``run``: in this, the request's, thread (module doc)."""
    thread = RequestThread()
    done = asyncio.run_coroutine_threadsafe(
        _serve(server_for(thread.run), asgi_scope(request), body), event_loop()
    )
    return thread.serve_until(done)
