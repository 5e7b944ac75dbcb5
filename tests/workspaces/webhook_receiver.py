"""A real HTTP receiver for webhook tests: a threading http.server on 127.0.0.1."""

from __future__ import annotations

import base64
import hashlib
import hmac
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    # Statuses to answer, in order; when used up, 200.
    statuses: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    # Requests answered so far (a held one is received, not answered).
    answered: int = 0


@contextmanager
def receiver(
    statuses: list[int] | None = None,
    *,
    hold: threading.Event | None = None,
    port: int = 0,
    state: Receiver | None = None,
) -> Iterator[Receiver]:
    """``hold``: every request waits for it to be set before it is answered
    (a receiver that hangs). ``port`` and ``state``: the same receiver
    started again after it was down."""
    state = Receiver(url="", statuses=list(statuses or [])) if state is None else state
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            assert state is not None
            with lock:
                state.received.append(
                    Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                status = state.statuses.pop(0) if state.statuses else 200
            if hold is not None:
                hold.wait(timeout=120)
            with lock:
                state.answered += 1
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: object) -> None:
            return

    ThreadingHTTPServer.allow_reuse_address = True
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/daneshyar?source=test"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def signature_verifies(secret: str, received: Received) -> bool:
    """As a receiver verifies (docs/webhooks.md), written apart from the signing module."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    h = received.headers
    signed = f"{h['webhook-id']}.{h['webhook-timestamp']}.".encode() + received.body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(hmac.compare_digest(expected, s.removeprefix("v1,")) for s in h["webhook-signature"].split())
