"""A receiver that hangs never delays ingestion: deliveries run on their
own queue, taken by a worker of their own (daneshyar/config/webhooks.py), so
documents uploaded while a delivery is stuck still become ``ready``. No
timing: the receiver holds the request until the test lets it go."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from django.conf import settings

from tests.conftest import Tenant
from tests.worker import purge_queue, running_worker, stop_process, wait_for, worker_process
from tests.workspaces.webhook_receiver import Receiver, receiver
from workspaces.models import DeliveryStatus, WebhookDelivery
from workspaces.tasks import webhook_deliver
from workspaces.webhooks.services import webhook_create

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _upload(tenant: Tenant, title: str) -> str:
    response = tenant.client().post(
        f"/api/v1/workspaces/{tenant.workspace.id}/resources/",
        {"title": title, "text": f"{title}: parcels ship within two working days."},
        format="json",
    )
    assert response.status_code == 202, response.json()
    return str(response.json()["data"]["id"])


def _until(condition: object, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_deliveries_are_routed_to_their_own_queue() -> None:
    route = webhook_deliver.app.amqp.router.route({}, webhook_deliver.name)
    assert route["queue"].name == settings.WEBHOOK_QUEUE != settings.CELERY_TASK_DEFAULT_QUEUE


def test_documents_become_ready_while_a_delivery_hangs(owner: Tenant, tmp_path: Path) -> None:
    hold = threading.Event()
    purge_queue()
    # Deliveries: a worker process of their own, one thread, the longest attempt.
    hooks_worker = worker_process(
        "--queues", settings.WEBHOOK_QUEUE, "--pool", "threads", "--concurrency", "1",
        env={"WEBHOOK_TIMEOUT_SECONDS": "60"}, log=tmp_path / "webhooks.log",
    )  # fmt: skip
    try:
        with receiver(hold=hold) as hooks, running_worker(queues=[settings.INGEST_QUEUE]):
            webhook_create(workspace=owner.workspace, url=hooks.url)
            first = wait_for(_upload(owner, "First"))
            assert first.status == "ready"
            _until(lambda: len(hooks.received) == 1)  # resource.ready posted, and held
            later = [wait_for(_upload(owner, f"Doc {n}"), timeout=60) for n in range(3)]
            assert [r.status for r in later] == ["ready"] * 3
            # Ingested while the first delivery was still unanswered.
            assert hooks.answered == 0 and len(hooks.received) == 1
            assert not WebhookDelivery.objects.filter(status=DeliveryStatus.DELIVERED).exists()
            hold.set()
            _until(lambda: _all_delivered(hooks, 4))
    finally:
        hold.set()
        stop_process(hooks_worker)
        purge_queue()


def _all_delivered(hooks: Receiver, count: int) -> bool:
    delivered = WebhookDelivery.objects.filter(status=DeliveryStatus.DELIVERED).count()
    return delivered == count and hooks.answered >= count
