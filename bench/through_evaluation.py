"""A bench's figures reproduced through the evaluation API (docs/evaluation.md).

The bench's own questions become a test set of its workspace, imported as
JSONL with ``POST …/test-sets/{id}/import/``; ``POST …/evaluations/`` starts
a run, which a real Celery worker (a thread on the configured broker, as
tests/worker.py starts one) puts through the chat turn; the bench follows
``progress`` with ``GET …/evaluations/{id}/`` and reads the run's metrics
and per-item results back from the API. Nothing of the run is computed
here: the figures are the service's.

Use a broker of its own (e.g. ``REDIS_URL=redis://127.0.0.1:6379/13``): the
queue is purged first.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

IMPORT_LINES = 500  # an import is at most 2 MiB: the items go in slices


@contextmanager
def running_worker() -> Iterator[None]:
    """A real worker thread (solo pool) on the configured broker, taking the
    evaluation runs, ingestion and the sweeps; its queues purged first."""
    from celery.contrib.testing.worker import start_worker
    from django.conf import settings

    from daneshyar.celery import app

    queues = [settings.EVALUATION_QUEUE, settings.INGEST_QUEUE, settings.MAINTENANCE_QUEUE]
    with app.connection_for_write() as connection:
        for queue in queues:
            connection.default_channel.queue_purge(queue)
    with start_worker(
        app, queues=queues, pool="solo", concurrency=1, perform_ping_check=False, loglevel="WARNING"
    ):
        yield


class EvaluationClient:
    """The evaluation routes of one workspace, called with an admin key."""

    def __init__(self, workspace: Any) -> None:
        from rest_framework.test import APIClient

        from workspaces import services
        from workspaces.models import ApiKeyScope

        created = services.api_key_create(
            organization=workspace.organization, name="bench evaluation", scope=ApiKeyScope.ADMIN
        )
        self.client = APIClient(HTTP_X_API_KEY=created.plaintext)
        self.base = f"/api/v1/workspaces/{workspace.id}/"

    def call(self, method: str, path: str, body: Any = None, **extra: Any) -> Any:
        response = getattr(self.client, method)(self.base + path, body, **extra)
        if response.status_code >= 300:
            raise RuntimeError(f"{method.upper()} {path}: {response.status_code} {response.content[:500]!r}")
        return response.json()["data"]

    def test_set(self, name: str, items: Sequence[dict[str, Any]]) -> str:
        test_set = self.call("post", "test-sets/", {"name": name}, format="json")["id"]
        for start in range(0, len(items), IMPORT_LINES):
            body = "\n".join(json.dumps(item) for item in items[start : start + IMPORT_LINES])
            self.call("post", f"test-sets/{test_set}/import/", body, content_type="application/x-ndjson")
        return str(test_set)

    def run(self, test_set: str, *, model: str, k: int | None = None, label: str = "") -> dict[str, Any]:
        """Start a run and follow it to its end (a worker must be running): the run as the API shows it."""
        body: dict[str, Any] = {"test_set_id": test_set, "model": model} | ({"k": k} if k else {})
        run = self.call("post", "evaluations/", body, format="json")
        started, shown = time.monotonic(), -1
        while run["status"] in ("pending", "running"):
            time.sleep(0.5)
            run = self.call("get", f"evaluations/{run['id']}/")
            done = run["progress"]["done"]
            if done // 100 != shown // 100:
                print(f"  {label} run {run['id']}: {done}/{run['progress']['total']}", flush=True)
                shown = done
        if run["status"] != "completed":
            raise RuntimeError(f"run {run['id']} {run['status']}: {run['error']}")
        print(f"  {label} run completed in {time.monotonic() - started:.0f} s", flush=True)
        return dict(run)

    def results(self, run_id: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        cursor = ""
        while True:
            page = self.call("get", f"evaluations/{run_id}/items/?limit=100{cursor}")
            out.extend(page["items"])
            if not page.get("next_cursor"):
                return out
            cursor = f"&cursor={page['next_cursor']}"


def parity_line(name: str, bench: float, service: float | None) -> str:
    """One figure of the bench beside the evaluation run's, and whether they agree within ±0.005."""
    if service is None:
        return f"{name:40s} {bench:8.3f} {'-':>10s}"
    agree = "yes" if abs(bench - service) <= 0.005 else "NO"
    return f"{name:40s} {bench:8.3f} {service:10.3f} {service - bench:+8.4f}  {agree}"
