"""Background work by kind (daneshyar/config/background.py), on the real
broker (Redis), PostgreSQL and the real embedding model:

- a bulk upload is a few "work is waiting" messages, not one per document,
  and a lost message loses nothing (the work is in the database);
- a sweep is never queued twice while one is queued or running;
- the suite's queues and markers are its own: a service running beside it
  on the same Redis keeps its messages.
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import timedelta
from typing import Any

import pytest
import redis
from celery.beat import ScheduleEntry
from celery.worker import WorkController
from django.conf import settings
from django.test import override_settings
from django.utils import timezone
from pytest_django import Settings

from daneshyar.celery import QueuedOnceScheduler, app, queue_waiting
from daneshyar.markers import marker_claim, marker_release
from resources import services
from resources.models import Resource, ResourceStatus
from resources.tasks import ingest_next, ingest_wake, sweep_stale_resources
from retrieval import indexing
from tests.conftest import Tenant
from tests.worker import all_queues, batch_upload, purge_queue, running_worker, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _upload(tenant: Tenant, text: str) -> str:
    response = tenant.client().post(
        f"/api/v1/workspaces/{tenant.workspace.id}/resources/", {"title": text, "text": text}, format="json"
    )
    assert response.status_code == 202, response.json()
    return str(response.json()["data"]["id"])


def test_an_upload_of_hundreds_queues_a_message_or_two_and_every_document_is_ingested(
    owner: Tenant, outsider: Tenant, settings: Settings
) -> None:
    settings.INGEST_BATCH_SIZE = 16
    purge_queue()
    backlog = batch_upload(owner, 300, "BULK") + [_upload(owner, f"single upload {i}") for i in range(30)]
    # Regression: one message per document (5,174 of them ahead of
    # everything else in a one-queue service).
    assert queue_waiting(settings.INGEST_QUEUE) <= 2
    late = _upload(outsider, "another organization's document")
    assert queue_waiting(settings.INGEST_QUEUE) <= 2
    with running_worker():
        assert wait_for(late, timeout=120).status == ResourceStatus.READY
        for resource_id in backlog:
            assert wait_for(resource_id, timeout=300).status == ResourceStatus.READY
            assert queue_waiting(settings.INGEST_QUEUE) <= 2
    assert set(Resource.objects.values_list("attempts", flat=True)) == {1}
    purge_queue()


def test_lost_messages_lose_nothing_the_sweep_wakes_a_worker(owner: Tenant) -> None:
    purge_queue()
    ids = batch_upload(owner, 20, "LOST")
    purge_queue()  # every "work is waiting" message lost (a broker restarted empty)
    assert queue_waiting(settings.INGEST_QUEUE) == 0
    with running_worker():
        time.sleep(2)
        assert set(Resource.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"pending"}
        sweep_stale_resources()  # beat runs it every INGEST_SWEEP_INTERVAL_SECONDS
        for resource_id in ids:
            assert wait_for(resource_id, timeout=120).status == ResourceStatus.READY
    purge_queue()


def test_a_retry_waits_its_backoff_in_the_database_with_one_delayed_wake(
    owner: Tenant, celery_worker: WorkController, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.INGEST_RETRY_BACKOFF_SECONDS = 3
    real = indexing.chunks_embed
    failed_at: list[float] = []

    def flaky(*, chunks: Any, on_progress: Any = None, model: str | None = None) -> Any:
        if not failed_at:
            failed_at.append(time.monotonic())
            raise ConnectionError("embedding backend went away")
        return real(chunks=chunks, on_progress=on_progress, model=model)

    monkeypatch.setattr(indexing, "chunks_embed", flaky)
    resource_id = _upload(owner, "a document whose first attempt fails")
    deadline = time.monotonic() + 60
    while not failed_at or Resource.objects.get(pk=resource_id).ingest_retry_at is None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    waiting = Resource.objects.get(pk=resource_id)
    assert waiting.status == ResourceStatus.PENDING and waiting.attempts == 1
    resource = wait_for(resource_id, timeout=60)
    assert resource.status == ResourceStatus.READY and resource.attempts == 2
    assert resource.ingest_retry_at is None
    # Not before its backoff; well before the sweep's interval would have woken it.
    assert 3 <= time.monotonic() - failed_at[0] < settings.INGEST_SWEEP_INTERVAL_SECONDS


def test_a_resource_waiting_for_its_retry_is_not_claimed_before_its_backoff(owner: Tenant) -> None:
    from resources import ingestion

    resource = services.resource_create_from_text(workspace=owner.workspace, text="retry later").resource
    later = timezone.now() + timedelta(minutes=5)
    Resource.objects.filter(pk=resource.pk).update(attempts=1, ingest_retry_at=later)
    assert ingestion.resources_ingest_claim(resource_ids=[], fill=10) == []
    assert ingestion.next_retry_at() == later
    Resource.objects.filter(pk=resource.pk).update(ingest_retry_at=timezone.now())
    assert [r.pk for r in ingestion.resources_ingest_claim(resource_ids=[], fill=10)] == [resource.pk]


def _entry(task: str) -> ScheduleEntry:
    return ScheduleEntry(name=task, task=task, schedule=timedelta(seconds=60), app=app)


def _redis() -> redis.Redis:
    assert settings.REDIS_URL, "these tests need the real broker: set REDIS_URL"
    return redis.Redis.from_url(settings.REDIS_URL, decode_responses=True)


def _waiting_messages(queue: str) -> list[dict[str, Any]]:
    raw: list[str] = _redis().lrange(queue, 0, -1)  # type: ignore[assignment]
    return [json.loads(message)["headers"] for message in raw]


def test_beat_never_queues_a_sweep_that_is_still_queued_or_running(tmp_path: Any) -> None:
    purge_queue()
    scheduler = QueuedOnceScheduler(app=app, schedule_filename=str(tmp_path / "beat"), lazy=True)
    entry = _entry("resources.sweep_stale")
    first = scheduler.apply_async(entry, advance=False)
    for _ in range(5):  # every interval that passes while it waits behind a busy worker
        assert scheduler.apply_async(entry, advance=False).id == first.id
    queued = _waiting_messages(settings.MAINTENANCE_QUEUE)
    assert [m["task"] for m in queued] == ["resources.sweep_stale"]
    with running_worker(queues=[settings.MAINTENANCE_QUEUE]):
        deadline = time.monotonic() + 30
        while marker_claim("periodic:resources.sweep_stale", "probe", seconds=60) is not None:
            assert time.monotonic() < deadline, "the sweep ran but its marker stayed"
            time.sleep(0.1)
        marker_release("periodic:resources.sweep_stale", "probe")
        # Ended: the next interval queues it again.
        assert scheduler.apply_async(entry, advance=False).id != first.id
    purge_queue()


@override_settings(PERIODIC_TASK_LEASE_SECONDS=60)
def test_a_sweep_whose_worker_died_is_queued_again_after_its_lease() -> None:
    name = f"periodic:test-{uuid.uuid4().hex}"
    assert marker_claim(name, "dead-worker", seconds=1) is None
    assert marker_claim(name, "next", seconds=60) == "dead-worker"
    time.sleep(2.1)
    assert marker_claim(name, "next", seconds=60) is None
    marker_release(name, "dead-worker")  # an old holder cannot release the new one
    assert marker_claim(name, "third", seconds=60) == "next"
    marker_release(name, "next")


def test_a_service_beside_the_suite_on_the_same_redis_keeps_its_messages(owner: Tenant) -> None:
    """A ``make run`` (no prefix) or another deployment on the same Redis
    database: its queues are not this run's, so the suite's workers never
    take its messages and purging the suite's queues leaves them alone."""
    assert settings.CELERY_QUEUE_PREFIX.startswith("test-")
    service = ["ingest", "sources", "evaluations", "maintenance", "webhooks"]
    assert not set(service) & set(all_queues())
    client = _redis()
    before: dict[str, int] = {queue: client.llen(queue) for queue in service}  # type: ignore[misc]
    with app.producer_or_acquire() as producer:
        for queue in service:
            headers = {"task": "resources.ingest_next"}
            producer.publish({"service": "message"}, routing_key=queue, declare=[], headers=headers)
    resource_id = _upload(owner, "the suite's own document")
    with running_worker():
        assert wait_for(resource_id, timeout=120).status == ResourceStatus.READY
    purge_queue()
    for queue in service:
        assert client.llen(queue) == before[queue] + 1, queue
        message: str = client.lpop(queue)  # type: ignore[assignment]
        assert json.loads(message)["headers"]["task"] == "resources.ingest_next"


def test_a_wake_with_a_message_already_waiting_queues_nothing_more(owner: Tenant) -> None:
    purge_queue()
    services.resource_create_from_text(workspace=owner.workspace, text="one document")
    for _ in range(10):
        ingest_wake()
    assert queue_waiting(settings.INGEST_QUEUE) == 1
    purge_queue()


def test_run_at_once_an_upload_is_ingested_whatever_waits_in_the_queue(
    owner: Tenant, settings: Settings
) -> None:
    """CELERY_TASK_ALWAYS_EAGER (a bench, a command that ingests in its own
    process): a "work is waiting" message left in the broker's queue by
    someone else does not stop the wake, which queues nothing."""
    purge_queue()
    ingest_next.apply_async(queue=settings.INGEST_QUEUE)  # left behind: no worker takes it
    assert queue_waiting(settings.INGEST_QUEUE) == 1
    settings.CELERY_TASK_ALWAYS_EAGER = True
    app.conf.task_always_eager = True
    try:
        resource_id = _upload(owner, "a document ingested at once")
    finally:
        app.conf.task_always_eager = False
    assert Resource.objects.get(pk=resource_id).status == ResourceStatus.READY
    assert queue_waiting(settings.INGEST_QUEUE) == 1
    purge_queue()
