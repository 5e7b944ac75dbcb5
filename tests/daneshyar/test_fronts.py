"""Both buffering fronts — nginx with deploy/nginx.conf (compose) and
daneshyar/devproxy.py (``make run``) — before a stand-in for gunicorn: a
plain socket server that records what it received and when it finished
writing its response, so a test can tell whether a slow client would have
held one of gunicorn's threads (issue 23: "Slow-reading exports and long
turns hold the same threads")."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.nginx import nginx_in_front
from tests.slow_clients import free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BIG = 32 * 1024 * 1024  # far more than the sockets between them hold


class Upstream:
    """Answers every request with ``size`` bytes; keeps the requests and the
    time each response was fully written."""

    def __init__(self, size: int):
        self.size = size
        self.requests: list[bytes] = []
        self.written: list[float] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.answer, args=(conn,), daemon=True).start()

    def answer(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            lengths = [line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
            length = int(lengths[0].split(b":")[1]) if lengths else 0
            while len(body) < length:
                body += conn.recv(65536)
            self.requests.append(head + b"\r\n\r\n" + body)
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                + f"Content-Length: {self.size}\r\nConnection: close\r\n\r\n".encode()
                + b"x" * self.size
            )
            self.written.append(time.monotonic())


@contextmanager
def devproxy(upstream: str) -> Iterator[int]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "daneshyar.devproxy", "--bind", f"127.0.0.1:{port}", "--upstream", upstream],
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the proxy did not start"
                time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)


@contextmanager
def front(kind: str, upstream: str) -> Iterator[int]:
    with nginx_in_front(upstream) if kind == "nginx" else devproxy(upstream) as port:
        yield port


@pytest.mark.parametrize("kind", ["nginx", "devproxy"])
def test_a_client_that_never_reads_holds_nothing_upstream(kind: str) -> None:
    upstream = Upstream(BIG)
    with front(kind, upstream.address) as port, socket.create_connection(("127.0.0.1", port)) as client:
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        client.sendall(b"GET /export HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        deadline = time.monotonic() + 10
        while not upstream.written:  # the client reads nothing meanwhile
            assert time.monotonic() < deadline, "the upstream is still writing to a client that never reads"
            time.sleep(0.05)


@pytest.mark.parametrize("kind", ["nginx", "devproxy"])
def test_a_chunked_body_arrives_whole_with_its_length_and_host(kind: str) -> None:
    upstream = Upstream(2)
    with front(kind, upstream.address) as port:
        response = httpx.post(
            f"http://127.0.0.1:{port}/api/v1/x/", content=iter([b"hello ", b"world"]), timeout=10
        )
    assert response.status_code == 200
    (request,) = upstream.requests
    head, _, body = request.partition(b"\r\n\r\n")
    assert body == b"hello world"
    assert b"content-length: 11" in head.lower()
    assert b"transfer-encoding" not in head.lower()
    # The port too: Django's CSRF check compares the Host with the Origin.
    assert f"host: 127.0.0.1:{port}".encode() in head.lower()


def test_devproxy_refuses_a_body_over_its_limit_in_the_envelope() -> None:
    upstream = Upstream(2)
    with devproxy(upstream.address) as port:
        response = httpx.post(f"http://127.0.0.1:{port}/x", content=b"x" * (27 * 1024 * 1024), timeout=30)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
    assert upstream.requests == []


def test_devproxy_forwards_the_address_it_saw_never_the_client_s() -> None:
    """make run's proxy is the front: X-Forwarded-For is the peer's address
    alone (the admin login's lockout keys on it: daneshyar/clientip.py)."""
    upstream = Upstream(2)
    forged = {"X-Forwarded-For": "81.2.69.1", "X-Real-IP": "81.2.69.2"}
    with devproxy(upstream.address) as port:
        assert httpx.get(f"http://127.0.0.1:{port}/x", headers=forged, timeout=10).status_code == 200
    (request,) = upstream.requests
    fields = [line.lower() for line in request.partition(b"\r\n\r\n")[0].split(b"\r\n")[1:]]
    assert [f for f in fields if f.startswith((b"x-forwarded-for:", b"x-real-ip:"))] == [
        b"x-forwarded-for: 127.0.0.1"
    ]
