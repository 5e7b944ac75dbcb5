#!/usr/bin/env python3
"""A slow webhook receiver never slows ingestion: the time to ingest N small
documents to ``ready`` with (a) no webhook endpoint, (b) an endpoint whose
receiver answers at once, (c) one whose receiver sleeps --slow seconds per
request (past WEBHOOK_TIMEOUT_SECONDS: every attempt times out, retried).

Usage:
  .venv/bin/python bench/webhook_receiver.py [--documents 50] [--wave 10] [--repeats 3] [--slow 10]
      [--shared]

What runs: a private ``redis-server`` on a free port (the shared Redis is
never touched), the ingestion worker (``celery worker --queues ingest``,
solo pool, as ``make run`` on a small machine) and the webhook worker
(``--queues webhooks``, 4 threads, as docker-compose.yml's ``webhooks``),
on their own database ``daneshyar_bench_webhook_receiver`` with the real
embedding model, and a receiver (http.server, threads) in this process.
Each run empties the workspace, sets the endpoint of its case, uploads the
documents in waves of --wave (``POST …/resources/batch/``, the next once
the last is ``ready``) and times until all are ``ready``; the cases take
turns (a, b, c, a, b, c, …). Printed: each case's median seconds, and
b/a and c/a. ``--shared``: the same with one worker taking both queues, as
before deliveries had their own (c's next wave waits for the slow posts of
the one before).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.chaos_ingest import Broker, _free_port, _stop  # noqa: E402  (after sys.path)


def _receiver(delay: dict[str, float]) -> ThreadingHTTPServer:
    """Answers 200 after ``delay["seconds"]`` (read per request)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            time.sleep(delay["seconds"])
            with contextlib.suppress(OSError):  # the worker gave up waiting
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--documents", type=int, default=50, help="documents per run")
    parser.add_argument("--wave", type=int, default=10, help="documents per upload")
    parser.add_argument("--repeats", type=int, default=3, help="runs per case")
    parser.add_argument("--slow", type=float, default=10.0, help="the slow receiver's wait, seconds")
    parser.add_argument(
        "--shared", action="store_true", help="one solo worker for both queues (the arrangement before)"
    )
    args = parser.parse_args()

    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
    scratch = Path(tempfile.mkdtemp(prefix="webhook-receiver-"))
    broker = Broker(port=_free_port(), folder=scratch)
    broker.start()
    workers: list[subprocess.Popen[bytes]] = []
    try:
        os.environ["REDIS_URL"] = broker.url
        os.environ.pop("CELERY_BROKER_URL", None)
        os.environ["RATE_LIMIT_ENABLED"] = "false"
        os.environ["OUTBOUND_ALLOW_PRIVATE"] = "true"
        from bench import _django

        _django.setup("webhook_receiver")
        workspace_id, key = _tenant()
        workers += _start_workers(scratch, shared=args.shared)
        return _run(args, workspace_id, key)
    finally:
        for worker in workers:
            with contextlib.suppress(Exception):
                _stop(worker)
        broker.stop()


def _tenant() -> tuple[str, str]:
    from workspaces import services
    from workspaces.models import ApiKey, ApiKeyScope, Organization, Workspace

    organization, _ = Organization.objects.get_or_create(name="bench-webhook-receiver")
    workspace, _ = Workspace.objects.get_or_create(organization=organization, name="webhook-receiver")
    ApiKey.objects.filter(organization=organization).delete()
    key = services.api_key_create(organization=organization, name="bench", scope=ApiKeyScope.ADMIN)
    return str(workspace.id), key.plaintext


def _start_workers(scratch: Path, *, shared: bool) -> list[subprocess.Popen[bytes]]:
    if shared:  # the arrangement before: one worker takes both queues
        together = ["--queues", "ingest,maintenance,webhooks", "--pool", "solo"]
        return [_start_worker(scratch, "shared", together)]
    threads = ["--pool", "threads", "--concurrency", "4"]
    return [
        _start_worker(scratch, "ingestion", ["--queues", "ingest,maintenance", "--pool", "solo"]),
        _start_worker(scratch, "webhooks", ["--queues", "webhooks", *threads]),
    ]


def _start_worker(scratch: Path, name: str, options: list[str]) -> subprocess.Popen[bytes]:
    from django.db import connection

    params = connection.get_connection_params()
    env = {
        **os.environ,
        "DATABASE_URL": f"postgresql://postgres@/{connection.settings_dict['NAME']}?host={params['host']}",
        "DATABASE_CONN_MAX_AGE": "0",
    }
    log = scratch / f"{name}.log"
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "daneshyar", "worker", "--loglevel=INFO",
         "--hostname", f"{name}@bench", *options],
        cwd=ROOT, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 600
    while " ready." not in log.read_text(errors="replace"):
        if worker.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the {name} worker did not start; see {log}")
        time.sleep(0.5)
    return worker


def _ingest(workspace_id: str, key: str, documents: list[dict[str, str]], wave: int) -> float:
    """Seconds until every document is ``ready``, uploaded in waves of
    ``wave`` (``POST …/resources/batch/``), each once the one before is
    ready: a stream of uploads, each wave's events queued before the next."""
    from rest_framework.test import APIClient

    from resources.models import Resource, ResourceStatus

    client = APIClient()
    client.credentials(HTTP_X_API_KEY=key)
    began = time.monotonic()
    mine = Resource.objects.filter(workspace_id=workspace_id)
    for start in range(0, len(documents), wave):
        part = documents[start : start + wave]
        response = client.post(f"/api/v1/workspaces/{workspace_id}/resources/batch/", part, format="json")
        assert response.status_code == 202, response.content[:300]
        while mine.filter(status=ResourceStatus.READY).count() < start + len(part):
            if mine.filter(status=ResourceStatus.FAILED).exists():
                raise SystemExit("a document failed")
            if time.monotonic() - began > 1800:
                raise SystemExit("not ready after 1800 s")
            time.sleep(0.05)
    return time.monotonic() - began


def _case(workspace_id: str, url: str | None) -> None:
    """An empty workspace, with the case's endpoint (or none)."""
    from resources.models import Resource
    from workspaces.models import WebhookEndpoint, Workspace
    from workspaces.webhooks.services import webhook_create

    Resource.objects.filter(workspace_id=workspace_id).delete()
    WebhookEndpoint.objects.filter(workspace_id=workspace_id).delete()
    if url is not None:
        webhook_create(workspace=Workspace.objects.get(pk=workspace_id), url=url)


def _run(args: argparse.Namespace, workspace_id: str, key: str) -> int:
    from django.conf import settings

    delay = {"seconds": 0.0}
    server = _receiver(delay)
    url = f"http://127.0.0.1:{server.server_address[1]}/hooks"
    cases: dict[str, tuple[str | None, float]] = {
        "a. no endpoint": (None, 0.0),
        "b. receiver answers at once": (url, 0.0),
        f"c. receiver sleeps {args.slow:g} s": (url, args.slow),
    }
    documents = [
        {"title": f"Note {n}", "text": f"Note {n}: parcels to zone {n} ship within {n % 5 + 1} working days."}
        for n in range(args.documents)
    ]
    _case(workspace_id, None)
    _ingest(workspace_id, key, documents[:5], 5)  # warm-up: the model loads in the first task
    times: dict[str, list[float]] = {name: [] for name in cases}
    load_before = os.getloadavg()
    for _ in range(args.repeats):
        for name, (case_url, seconds) in cases.items():
            delay["seconds"] = seconds
            _case(workspace_id, case_url)
            times[name].append(_ingest(workspace_id, key, documents, args.wave))
    load_after = os.getloadavg()
    server.shutdown()
    print(
        f"webhook receiver: {args.documents} small documents per run in waves of {args.wave}, "
        f"{args.repeats} runs per case; "
        f"{'one worker for both queues' if args.shared else 'deliveries on their own worker'}; "
        f"WEBHOOK_TIMEOUT_SECONDS {settings.WEBHOOK_TIMEOUT_SECONDS}; cores {os.cpu_count()}, "
        f"load average {load_before[0]:.2f} -> {load_after[0]:.2f}"
    )
    base = statistics.median(times["a. no endpoint"])
    for name, values in times.items():
        median = statistics.median(values)
        runs = ", ".join(f"{v:.1f}" for v in values)
        print(f"{name:<32} median {median:6.2f} s  ({runs})  x{median / base:.2f} of a")
    return 0


if __name__ == "__main__":
    sys.exit(main())
