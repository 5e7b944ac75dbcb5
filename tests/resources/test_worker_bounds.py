"""Bounded ingestion through a real prefork Celery worker (its own process,
with the task time limits): a zip bomb, a PDF built to be expensive and a
parse stuck in C code each end ``failed`` after one attempt, the worker
survives, and another tenant's upload still becomes ready. And the
heartbeat kept while a long parse runs."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery.worker import WorkController
from pytest_django import Settings

from resources.heartbeat import heartbeat_while
from resources.models import Resource, ResourceStatus
from resources.tasks import sweep_stale_resources
from tests.conftest import Tenant
from tests.resources.files import long_text, make_expensive_pdf, make_zip_bomb_docx
from tests.worker import file_upload, pool_children, purge_queue, stop_process, wait_for, worker_process

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

SOFT_LIMIT = 15
HARD_LIMIT = 25


@pytest.fixture
def worker(owner: Tenant, outsider: Tenant, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A prefork worker (one child) with short time limits, on the test
    database; parsing a text that starts with STUCK hangs as if in C code
    (tests/resources/stuck_worker.py)."""
    purge_queue()
    # Only the worker has the short limits: it applies its own, whatever the
    # sender (this process, with the defaults) wrote into the message.
    process = worker_process(
        "--pool=prefork",
        "--concurrency=1",
        env={
            "INGEST_TASK_SOFT_TIME_LIMIT": str(SOFT_LIMIT),
            "INGEST_TASK_TIME_LIMIT": str(HARD_LIMIT),
            # The task limits are under test; the parse deadline stays out of the way.
            "INGEST_PARSE_TIMEOUT_SECONDS": "600",
        },
        script="tests/resources/stuck_worker.py",
        log=tmp_path / "worker.log",
    )
    try:
        # The pool child loads the embedding model in its first task: do that
        # before anything is timed.
        _ready(outsider, "warm-up")
        yield process
    finally:
        stop_process(process)
        purge_queue()


def _ready(tenant: Tenant, seed: str) -> Resource:
    resource = wait_for(
        file_upload(tenant, f"{seed}.txt", long_text(paragraphs=3, seed=seed).encode()), timeout=120
    )
    assert resource.status == ResourceStatus.READY, resource.error_message
    return resource


def _error(tenant: Tenant, resource_id: str) -> dict[str, str]:
    body = tenant.client("chat").get(f"/api/v1/workspaces/{tenant.workspace.id}/resources/{resource_id}/")
    return dict(body.json()["data"]["error"])


def _still_failed_after(resource_id: str, seconds: float) -> Resource:
    """Not retried: after a while it is still failed, with one attempt."""
    time.sleep(seconds)
    resource = Resource.objects.get(pk=resource_id)
    assert resource.status == ResourceStatus.FAILED
    assert resource.attempts == 1
    assert resource.ingest_heartbeat_at is None
    return resource


def test_zip_bomb_docx_fails_in_seconds_and_the_worker_survives(
    owner: Tenant, outsider: Tenant, worker: subprocess.Popen[bytes]
) -> None:
    bomb = make_zip_bomb_docx()  # 42 kB, 40 MiB unpacked
    assert len(bomb) < 43_000
    children = pool_children(worker.pid)
    assert len(children) == 1

    began = time.monotonic()
    resource_id = file_upload(owner, "report.docx", bomb)
    resource = wait_for(resource_id, timeout=60)
    took = time.monotonic() - began

    assert resource.status == ResourceStatus.FAILED
    assert resource.error_code == "file_too_large_uncompressed"
    assert took < 10
    assert _error(owner, resource_id)["code"] == "file_too_large_uncompressed"
    _still_failed_after(resource_id, 2)
    # Same worker, same pool child: nothing was unpacked, nothing was killed.
    assert worker.poll() is None
    assert pool_children(worker.pid) == children
    _ready(outsider, "after-the-bomb")


def test_expensive_pdf_ends_at_the_soft_time_limit_without_a_retry(
    owner: Tenant, outsider: Tenant, worker: subprocess.Popen[bytes]
) -> None:
    # 3 kB; each of its 10 pages costs about 5 s of CPU to extract.
    pdf = make_expensive_pdf(pages=10)
    assert len(pdf) < 5_000
    children = pool_children(worker.pid)

    began = time.monotonic()
    resource_id = file_upload(owner, "expensive.pdf", pdf)
    resource = wait_for(resource_id, timeout=SOFT_LIMIT + 60)
    took = time.monotonic() - began

    assert resource.status == ResourceStatus.FAILED
    assert resource.error_code == "ingest_timeout"
    assert "INGEST_TASK_SOFT_TIME_LIMIT" in resource.error_message
    assert SOFT_LIMIT <= took < HARD_LIMIT + 5
    _still_failed_after(resource_id, 3)
    # The soft limit is an exception in the task: the child lives on.
    assert worker.poll() is None
    assert pool_children(worker.pid) == children
    _ready(outsider, "after-the-pdf")


def test_parse_stuck_in_c_code_ends_at_the_hard_time_limit_without_a_retry(
    owner: Tenant, outsider: Tenant, worker: subprocess.Popen[bytes]
) -> None:
    children = pool_children(worker.pid)

    began = time.monotonic()
    resource_id = file_upload(owner, "stuck.txt", b"STUCK " + long_text(paragraphs=2).encode())
    resource = wait_for(resource_id, timeout=HARD_LIMIT + 60)
    took = time.monotonic() - began

    assert resource.status == ResourceStatus.FAILED
    assert resource.error_code == "ingest_timeout"
    assert "INGEST_TASK_TIME_LIMIT" in resource.error_message
    assert HARD_LIMIT <= took < HARD_LIMIT + 15
    # Nothing left for the sweep either: the resource is finished.
    assert sweep_stale_resources(stale_after_seconds=0) == 0
    _still_failed_after(resource_id, 5)
    # The pool replaces the killed child (reaped a few seconds after the
    # kill); the worker itself is the same.
    deadline = time.monotonic() + 30
    while (replaced := pool_children(worker.pid)) in (set(), children) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert worker.poll() is None
    assert len(replaced) == 1 and replaced != children
    _ready(outsider, "after-the-stuck-parse")


def test_a_parse_longer_than_the_stale_age_keeps_its_heartbeat(
    owner: Tenant, celery_worker: WorkController, settings: Settings
) -> None:
    # Regression: the heartbeat moved only while embedding, so the sweep
    # re-queued a long parse while it still ran (a second attempt).
    settings.INGEST_STALE_AFTER_SECONDS = 2  # a beat every 0.4 s
    resource_id = file_upload(owner, "slow.pdf", make_expensive_pdf(pages=2))  # ~10 s of parsing
    wait_for(resource_id, statuses=(ResourceStatus.PROCESSING,), timeout=30)
    beats = set()
    while (resource := Resource.objects.get(pk=resource_id)).status == ResourceStatus.PROCESSING:
        assert sweep_stale_resources(stale_after_seconds=2) == 0
        if resource.ingest_heartbeat_at is not None:
            beats.add(resource.ingest_heartbeat_at)
        time.sleep(0.5)
    resource = wait_for(resource_id, timeout=30)
    assert resource.status == ResourceStatus.READY, resource.error_message
    assert resource.attempts == 1
    assert len(beats) >= 5


def test_heartbeat_beats_while_the_block_runs_and_never_past_its_limit() -> None:
    calls: list[float] = []
    with heartbeat_while(lambda: calls.append(time.monotonic()), interval=0.05, limit=10):
        time.sleep(0.5)
    ended = len(calls)
    assert ended >= 5
    time.sleep(0.2)
    assert len(calls) == ended  # stopped with the block
    calls.clear()
    with heartbeat_while(lambda: calls.append(time.monotonic()), interval=0.05, limit=0.2):
        time.sleep(0.6)
    # A step stuck past its bound goes stale, so the sweep still sees it.
    assert 1 <= len(calls) <= 5
