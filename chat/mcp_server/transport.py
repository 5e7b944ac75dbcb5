"""The protocol's Streamable HTTP transport, the official SDK's, driven from
a Django view: the request becomes an ASGI call to the SDK's session manager
in stateless, JSON-response mode, and its answer the view's response.

Stateless: each HTTP request is a whole exchange (no session is kept
between requests, so a client opening many sessions holds nothing on the
server), and JSON responses rather than an event stream, so a gunicorn
worker thread serves a request as it serves any other. The session a client
names to continue a conversation is the chat session (``answer``'s
``session_id``), kept in the database like every other."""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from asgiref.sync import async_to_sync
from django.conf import settings
from django.http import HttpRequest
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager


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


def serve(server: Server[Any], request: HttpRequest, body: bytes) -> AsgiReply:
    """``request`` answered by ``server`` through the SDK's transport. The
    event loop runs beside the request's thread, which meanwhile runs the
    tools' synchronous work (``sync_to_async(thread_sensitive=True)``)."""
    return async_to_sync(_serve)(server, asgi_scope(request), body)
