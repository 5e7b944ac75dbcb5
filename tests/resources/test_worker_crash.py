"""A worker process killed (SIGKILL) in the middle of an ingestion: the
resource must still end ready, through the sweep, never stay processing."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from django.db import connection

from resources import services
from resources.models import Resource, ResourceStatus
from resources.tasks import sweep_stale_resources
from retrieval.models import Passage
from tests.conftest import Tenant
from tests.resources.files import long_text
from tests.worker import purge_queue, running_worker, wait_for, worker_process

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def _worker_process() -> subprocess.Popen[bytes]:
    """``celery worker`` (solo pool) in its own process, on this test database and broker."""
    return worker_process("--pool=solo")


def test_worker_killed_mid_task_then_sweep_finishes_the_resource(owner: Tenant) -> None:
    connection.ensure_connection()
    purge_queue()
    worker = _worker_process()
    try:
        outcome = services.resource_create(
            workspace=owner.workspace,
            upload=services.Upload(data=long_text(paragraphs=60).encode(), title="big", filename="big.txt"),
        )
        wait_for(outcome.resource.id, statuses=(ResourceStatus.PROCESSING,), timeout=180)
    finally:
        worker.kill()
        worker.wait()
    time.sleep(1)
    stuck = Resource.objects.get(pk=outcome.resource.id)
    assert stuck.status == ResourceStatus.PROCESSING and stuck.attempts == 1
    assert not Passage.objects.filter(resource=stuck).exists()

    with running_worker():
        # The killed worker never acknowledged the message: with Redis it only
        # comes back after the visibility timeout (an hour). The sweep does
        # not wait that long; here it runs as if the heartbeat were stale.
        assert sweep_stale_resources(stale_after_seconds=0) == 1
        resource = wait_for(outcome.resource.id, timeout=180)
    connection.close()

    assert resource.status == ResourceStatus.READY
    assert resource.attempts == 2
    assert Passage.objects.filter(resource=resource).count() == resource.passage_count > 10


def test_stale_threshold_leaves_a_live_ingestion_alone(owner: Tenant) -> None:
    outcome = services.resource_create(
        workspace=owner.workspace, upload=services.Upload(data=b"fresh", title="t")
    )
    # Just queued: its heartbeat is fresh, so the sweep leaves it be.
    assert sweep_stale_resources() == 0
    assert Resource.objects.get(pk=outcome.resource.id).status == ResourceStatus.PENDING
    purge_queue()
