"""Hostile clients for the tests and the bench of the web tier's front: many
connections that each send half a request line and then nothing, as in
issue 23 ("Eight idle connections stall the web tier")."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx

# A request line and a header, without the CRLF that would end either.
HALF_REQUEST = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


@contextmanager
def half_sent_requests(host: str, port: int, count: int) -> Iterator[list[socket.socket]]:
    """``count`` open connections to ``host:port``, each with half a request
    sent; closed on exit."""
    with ExitStack() as stack:
        sockets = []
        for _ in range(count):
            sock = stack.enter_context(socket.create_connection((host, port), timeout=10))
            sock.sendall(HALF_REQUEST)
            sockets.append(sock)
        time.sleep(0.5)  # the server has accepted and read them all
        yield sockets


def seconds_to_answer(url: str, timeout: float = 10.0) -> float:
    """How long a normal GET of ``url`` takes to answer 200 (raises on a
    timeout or another status)."""
    started = time.perf_counter()
    response = httpx.get(url, timeout=timeout)
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, response.text
    return elapsed


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int) -> bool:
    """Nothing listens on ``port`` (connections closing there do not count)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True
