"""``make run`` (daneshyar/devserver.py, the real entry point) under hostile
clients and a Ctrl-C: issue 23, "Eight idle connections stall the web tier"
and "Ctrl-C then leaves the service half-alive".

Each test starts the whole service as ``make run`` does (its own embedded
PostgreSQL in a fresh data directory, gunicorn, the proxy, a Celery worker on
this run's Redis) on a free port.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import psutil
import pytest

from tests.rate_limits import GENEROUS_RATE_LIMITS
from tests.slow_clients import HALF_REQUEST, free_port, half_sent_requests, port_is_free, seconds_to_answer

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def data_dir() -> Iterator[Path]:
    # Short: the embedded server's socket lives in it (108 bytes at most).
    path = Path(tempfile.mkdtemp(prefix="dsy-run-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def start(port: int, data_dir: Path, **environment: str) -> subprocess.Popen[bytes]:
    """``make run`` in a session of its own, as in a terminal: a Ctrl-C there
    is a SIGINT to the whole foreground process group. ``environment`` is
    added to this process's."""
    env = {
        **os.environ,
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "DANESHYAR_DATA_DIR": str(data_dir),
        **{name: str(value) for name, value in GENEROUS_RATE_LIMITS.items()},
        **environment,
    }
    env.pop("DATABASE_URL", None)  # make run's own embedded database
    process = subprocess.Popen(
        [sys.executable, "-m", "daneshyar.devserver"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 240
    while True:
        assert process.poll() is None, "make run exited"
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "make run did not start"
        time.sleep(0.5)


def everything_started(process: subprocess.Popen[bytes], data_dir: Path) -> list[psutil.Process]:
    """make run, its children and theirs, and the embedded PostgreSQL."""
    root = psutil.Process(process.pid)
    started = [root, *root.children(recursive=True)]
    postmaster = int((data_dir / "postgres" / "postmaster.pid").read_text().split()[0])
    return [*started, psutil.Process(postmaster)]


def ctrl_c_and_wait(process: subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGINT)
    process.wait(timeout=60)


def gunicorn_socket(process: subprocess.Popen[bytes]) -> tuple[int, str]:
    """Where gunicorn listens: (family, address) from its command line."""
    for child in psutil.Process(process.pid).children(recursive=True):
        command = child.cmdline()
        if "gunicorn" in command and "--bind" in command:
            bind = command[command.index("--bind") + 1]
            if bind.startswith("unix:"):
                return socket.AF_UNIX, bind.removeprefix("unix:")
            return socket.AF_INET, bind
    raise AssertionError("no gunicorn process")


def hang_in_gunicorn(stack: ExitStack, process: subprocess.Popen[bytes], count: int) -> None:
    """``count`` half-sent requests straight to gunicorn: each holds one of its
    threads (the worker then waits out its graceful timeout on a stop)."""
    family, address = gunicorn_socket(process)
    for _ in range(count):
        sock = stack.enter_context(socket.socket(family, socket.SOCK_STREAM))
        if family == socket.AF_UNIX:
            sock.connect(address)
        else:
            host, _, port = address.rpartition(":")
            sock.connect((host, int(port)))
        sock.sendall(HALF_REQUEST)


def test_a_request_answers_at_once_past_200_half_sent_requests(data_dir: Path) -> None:
    port = free_port()
    process = start(port, data_dir)
    try:
        with half_sent_requests("127.0.0.1", port, 200):
            assert seconds_to_answer(f"http://127.0.0.1:{port}/healthz") < 1.0
    finally:
        ctrl_c_and_wait(process)


def test_ctrl_c_stops_everything_while_requests_hang_and_the_port_is_free_again(data_dir: Path) -> None:
    """The regression: gunicorn's worker outlived make run (parent 1, still
    bound to the port) and the next make run failed with "Address already in use"."""
    port = free_port()
    process = start(port, data_dir)
    try:
        with ExitStack() as hanging:
            hanging.enter_context(half_sent_requests("127.0.0.1", port, 20))
            hang_in_gunicorn(hanging, process, 16)
            started = everything_started(process, data_dir)
            ctrl_c_and_wait(process)
            _gone, alive = psutil.wait_procs(started, timeout=10)
            assert not alive, [(p.pid, p.cmdline()) for p in alive if p.is_running()]
        assert port_is_free(port)
    finally:
        if process.poll() is None:
            ctrl_c_and_wait(process)

    again = start(port, data_dir)
    try:
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
    finally:
        ctrl_c_and_wait(again)
    assert port_is_free(port)
