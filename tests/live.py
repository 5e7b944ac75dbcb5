"""A real server process on the test database, for tests with real HTTP
clients (tests/live_server.py is what runs in it)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.db import connection
from pytest_django import DjangoDbBlocker

from tests.rate_limits import GENEROUS_RATE_LIMITS

# Each running server's log, by its base URL (server_errors reads it).
_LOGS: dict[str, Any] = {}


def server_errors(base: str, *, limit: int = 8000) -> str:
    """The errors the server at ``base`` logged so far (tracebacks included),
    for a failing test's message: a 500 says nothing of its cause."""
    log = _LOGS.get(base)
    if log is None:
        return ""
    position = log.tell()
    try:
        log.seek(0)
        text = log.read().decode(errors="replace")
    finally:
        log.seek(position)
    start = text.find(" ERROR ")
    return text[start:][-limit:] if start >= 0 else ""


ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def live_server(**env: str) -> Iterator[str]:
    """gunicorn on a free port, on this test database (data must be committed:
    use ``transactional_db``); yields its base URL and stops it afterwards."""
    params = connection.get_connection_params()
    name = connection.settings_dict["NAME"]
    port = _free_port()
    environment = {
        **os.environ,
        "DATABASE_URL": f"postgresql://postgres@/{name}?host={params['host']}",
        "DATABASE_CONN_MAX_AGE": "0",
        # As deployed: the web worker's connections come from a pool (daneshyar/gunicorn.py).
        "DATABASE_POOL_SIZE": "4",
        # Tests send many requests a minute with one key.
        **{name: str(value) for name, value in GENEROUS_RATE_LIMITS.items()},
        **env,
    }
    # The server's log goes to a file, not a pipe: nobody reads a pipe while
    # the server runs, and once its buffer (64 KiB) is full every request
    # that logs (a 4xx warns) blocks the server.
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.live_server", "--bind", f"127.0.0.1:{port}"],
            cwd=ROOT,
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 90
            while True:
                if process.poll() is not None:
                    log.seek(0)
                    raise AssertionError(log.read().decode(errors="replace") or "server exited")
                try:
                    if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)
            _LOGS[base] = log
            yield base
        finally:
            _LOGS.pop(base, None)
            process.terminate()
            process.wait(timeout=60)
            connection.close()


@pytest.fixture(scope="session")
def live_server_real(django_db_setup: None, django_db_blocker: DjangoDbBlocker) -> Iterator[str]:
    """One server per test session, with the deployment's registry (the
    extractive engine by default). Tests using it need ``transactional_db``:
    the server reads what they committed."""
    with django_db_blocker.unblock(), live_server() as base:
        yield base


@pytest.fixture(scope="session")
def live_server_scripted(django_db_setup: None, django_db_blocker: DjangoDbBlocker) -> Iterator[str]:
    """One server per test session whose generation is the scripted stand-in:
    a fixed reply after 1.5 s of silence, with a 0.3 s heartbeat."""
    with (
        django_db_blocker.unblock(),
        live_server(
            SCRIPTED="1",
            SSE_HEARTBEAT_SECONDS="0.3",
            SCRIPTED_REPLY=SCRIPTED_REPLY,
            SCRIPTED_FIRST_TOKEN_DELAY="1.5",
        ) as base,
    ):
        yield base


SCRIPTED_REPLY = '{"type":"answer","parts":[{"text":"A streamed answer in several chunks.","passage":null}]}'
