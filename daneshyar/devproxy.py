"""``make run``'s buffering front: a small asyncio reverse proxy before gunicorn.

    python -m daneshyar.devproxy --bind 127.0.0.1:8000 --upstream unix:.data/run/web.sock

The same job as nginx in the compose deployment (deploy/nginx.conf), for a
machine where nginx is not installed: gunicorn's gthread worker gives a
thread to every connection it accepts until the request has arrived, with no
timeout, so eight idle clients that each send half a request line stalled
``make run``'s eight threads. Here one event loop holds every client
connection; a request reaches gunicorn only once its head (within
``HEADER_TIMEOUT``) and its body (no read apart by more than
``BODY_TIMEOUT``) are complete, and the response is taken from gunicorn as
fast as it comes (up to ``RESPONSE_BUFFER`` bytes held per client), so a
client that reads slowly or not at all holds no thread; one that reads
nothing for ``SEND_TIMEOUT`` is dropped. Event streams pass through as they
come. One request per connection (``Connection: close``). Measured against
the other options in docs/deployment.md, "make run".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import resource
import signal
import time

HEADER_TIMEOUT = 15.0
BODY_TIMEOUT = 30.0
SEND_TIMEOUT = 60.0
UPSTREAM_CONNECT_TIMEOUT = 5.0
MAX_HEAD_BYTES = 64 * 1024
# The largest upload plus multipart overhead (deploy/nginx.conf: client_max_body_size).
MAX_BODY_BYTES = 26 * 1024 * 1024
RESPONSE_BUFFER = 64 * 1024 * 1024
_HOP_BY_HOP = {
    b"connection",
    b"keep-alive",
    b"proxy-connection",
    b"te",
    b"transfer-encoding",
    b"upgrade",
    b"expect",
    b"content-length",
}

# Set by this proxy only: a client's own values are dropped.
_SET_HERE = {b"x-forwarded-for", b"x-real-ip"}


class BadRequest(Exception):
    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _error(status: int, reason: str, code: str, message: str) -> bytes:
    body = json.dumps({"status": "error", "error": {"code": code, "message": message}}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


_REASONS = {
    400: "Bad Request",
    413: "Payload Too Large",
    431: "Request Header Fields Too Large",
    502: "Bad Gateway",
}


def parse_head(head: bytes) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """The request line and the header fields of a request head."""
    lines = head[:-4].split(b"\r\n")
    request_line = lines[0]
    if len(request_line.split(b" ")) != 3 or not request_line.split(b" ")[2].startswith(b"HTTP/1."):
        raise BadRequest(400, "validation_error", "Malformed request line.")
    fields: list[tuple[bytes, bytes]] = []
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep or not name or name != name.strip():
            raise BadRequest(400, "validation_error", "Malformed header field.")
        fields.append((name.lower(), value.strip()))
    return request_line, fields


async def _read(reader: asyncio.StreamReader, size: int) -> bytes:
    try:
        return await asyncio.wait_for(reader.readexactly(size), BODY_TIMEOUT)
    except (TimeoutError, asyncio.IncompleteReadError) as error:
        raise ConnectionError("body not received") from error


async def read_body(reader: asyncio.StreamReader, fields: list[tuple[bytes, bytes]], limit: int) -> bytes:
    """The whole body: by Content-Length, or de-chunked; bounded in size and in
    the time between two reads."""
    values = dict(fields)
    if b"chunked" in values.get(b"transfer-encoding", b"").lower():
        body = bytearray()
        while True:
            try:
                line = await asyncio.wait_for(reader.readuntil(b"\r\n"), BODY_TIMEOUT)
                size = int(line.split(b";")[0].strip(), 16)
            except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as error:
                raise ConnectionError("body not received") from error
            except ValueError as error:
                raise BadRequest(400, "validation_error", "Malformed chunked body.") from error
            if len(body) + size > limit:
                raise BadRequest(413, "payload_too_large", f"The request body is over {limit} bytes.")
            body += (await _read(reader, size + 2))[:size]
            if size == 0:  # trailers are not supported: the empty line ends the body
                return bytes(body)
    try:
        length = int(values.get(b"content-length", b"0"))
    except ValueError as error:
        raise BadRequest(400, "validation_error", "Invalid Content-Length header.") from error
    if length < 0:
        raise BadRequest(400, "validation_error", "Invalid Content-Length header.")
    if length > limit:
        message = f"The request body is {length} bytes; the limit is {limit} bytes."
        raise BadRequest(413, "payload_too_large", message)
    body = bytearray()
    while len(body) < length:
        body += await _read(reader, min(65536, length - len(body)))
    return bytes(body)


def upstream_head(request_line: bytes, fields: list[tuple[bytes, bytes]], body: bytes, peer: str) -> bytes:
    """The request as gunicorn gets it. This proxy is the front: the client's
    address is the peer it saw, so ``X-Forwarded-For`` is that address
    alone — whatever the client wrote there (or in ``X-Real-IP``) is
    dropped, never passed on (the admin login's lockout keys on it:
    daneshyar/clientip.py)."""
    lines = [request_line]
    for name, value in fields:
        if name not in _HOP_BY_HOP and name not in _SET_HERE:
            lines.append(name + b": " + value)
    lines.append(b"X-Forwarded-For: " + peer.encode())
    if body or request_line.split(b" ")[0] in (b"POST", b"PUT", b"PATCH"):
        lines.append(b"Content-Length: " + str(len(body)).encode())
    lines.append(b"Connection: close")
    return b"\r\n".join(lines) + b"\r\n\r\n"


async def _flush(writer: asyncio.StreamWriter) -> None:
    """Wait until the client has taken what is buffered for it; drop a client
    that takes nothing for SEND_TIMEOUT."""
    transport = writer.transport
    last, since = transport.get_write_buffer_size(), time.monotonic()
    while (pending := transport.get_write_buffer_size()) > 0 and not transport.is_closing():
        if pending < last:
            last, since = pending, time.monotonic()
        elif time.monotonic() - since > SEND_TIMEOUT:
            raise ConnectionError("the client stopped reading")
        await asyncio.sleep(0.05)


async def relay(upstream: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """gunicorn's response to the client: read as fast as gunicorn writes
    (its thread is free once it has written), sent as fast as the client reads."""
    writer.transport.set_write_buffer_limits(high=RESPONSE_BUFFER)
    while data := await upstream.read(65536):
        writer.write(data)
        await asyncio.wait_for(writer.drain(), SEND_TIMEOUT)
    await _flush(writer)


class Proxy:
    def __init__(self, upstream: str, max_body_bytes: int = MAX_BODY_BYTES):
        self.upstream = upstream
        self.max_body_bytes = max_body_bytes

    async def connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self.upstream.startswith("unix:"):
            opening = asyncio.open_unix_connection(self.upstream.removeprefix("unix:"))
        else:
            host, _, port = self.upstream.rpartition(":")
            opening = asyncio.open_connection(host, int(port))
        return await asyncio.wait_for(opening, UPSTREAM_CONNECT_TIMEOUT)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_writer: asyncio.StreamWriter | None = None
        try:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEADER_TIMEOUT)
                request_line, fields = parse_head(head)
                if dict(fields).get(b"expect", b"").lower() == b"100-continue":
                    writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                body = await read_body(reader, fields, self.max_body_bytes)
            except asyncio.LimitOverrunError:
                raise BadRequest(431, "validation_error", "The request head is too large.") from None
            peer = writer.get_extra_info("peername")
            peer_host = peer[0] if isinstance(peer, tuple) else "127.0.0.1"
            try:
                upstream_reader, upstream_writer = await self.connect()
            except (OSError, TimeoutError):
                raise BadRequest(502, "internal_error", "The web server is not answering.") from None
            try:
                upstream_writer.write(upstream_head(request_line, fields, body, peer_host) + body)
                await upstream_writer.drain()
            except (OSError, TimeoutError):
                raise BadRequest(502, "internal_error", "The web server closed the connection.") from None
            await relay(upstream_reader, writer)
        except BadRequest as error:
            writer.write(_error(error.status, _REASONS[error.status], error.code, error.message))
            with contextlib.suppress(Exception):
                await asyncio.wait_for(_flush(writer), SEND_TIMEOUT)
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError, OSError):
            pass  # a client that went silent or away: close both sides
        finally:
            for side in (upstream_writer, writer):
                if side is not None:
                    side.transport.abort()


async def serve(bind: str, upstream: str, max_body_bytes: int = MAX_BODY_BYTES) -> None:
    host, _, port = bind.rpartition(":")
    proxy = Proxy(upstream, max_body_bytes)
    server = await asyncio.start_server(
        proxy.handle, host or "127.0.0.1", int(port), limit=MAX_HEAD_BYTES, reuse_address=True, backlog=1024
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    # Stop listening at once; asyncio.run then cancels the connections in flight.
    server.close()


def _raise_open_file_limit() -> None:
    """Every client holds a descriptor while it sends; many systems start
    processes at a soft limit of 1,024 with a far higher hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--bind", required=True, help="host:port to listen on")
    parser.add_argument("--upstream", required=True, help="unix:/path or host:port of gunicorn")
    parser.add_argument("--max-body-bytes", type=int, default=MAX_BODY_BYTES)
    args = parser.parse_args()
    _raise_open_file_limit()
    asyncio.run(serve(args.bind, args.upstream, args.max_body_bytes))


if __name__ == "__main__":
    main()
