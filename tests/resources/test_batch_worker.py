"""Ingestion in batches across documents, through a real Celery worker,
PostgreSQL + pgvector and the real embedding model: one model call and one
passage write per batch, and every guarantee of a single ingestion per
resource (a broken document fails alone, attempts counted per resource,
atomic swaps, nothing stuck)."""

from __future__ import annotations

import io
import threading
import uuid
import zipfile
from collections.abc import Sequence
from typing import Any

import pytest
from celery.worker import WorkController
from django.db import connection, transaction
from django.utils import timezone
from pytest_django import Settings

from resources import ingestion, services
from resources.chunking import Chunk
from resources.models import Resource, ResourceStatus
from retrieval import indexing
from retrieval.models import Passage
from tests.conftest import Tenant
from tests.resources.files import long_text
from tests.worker import purge_queue, running_worker, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


class EmbedCalls:
    """Wraps indexing.chunks_embed: which resources' texts each call held."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, poison: str | None = None):
        self.calls: list[list[str]] = []
        self.real = indexing.chunks_embed
        self.poison = poison
        monkeypatch.setattr(indexing, "chunks_embed", self)

    def __call__(self, *, chunks: Sequence[Chunk], on_progress: Any = None, model: str | None = None) -> Any:
        self.calls.append([c.text for c in chunks])
        if self.poison and any(self.poison in c.text for c in chunks):
            raise RuntimeError("the model choked on this text")
        return self.real(chunks=chunks, on_progress=on_progress, model=model)


def _bulk(tenant: Tenant, documents: list[dict[str, str]]) -> list[str]:
    response = tenant.client().post(
        f"/api/v1/workspaces/{tenant.workspace.id}/resources/batch/", documents, format="json"
    )
    assert response.status_code == 202, response.json()
    return [d["resource"]["id"] for d in response.json()["data"]["documents"]]


def _texts(n: int, tag: str = "") -> list[dict[str, str]]:
    return [
        {"title": f"doc {i}", "text": f"{tag}Document {i}. " + long_text(paragraphs=2, seed=str(i))}
        for i in range(n)
    ]


def test_a_bulk_upload_is_embedded_in_one_model_call_and_ends_ready(
    owner: Tenant, celery_worker: WorkController, monkeypatch: pytest.MonkeyPatch
) -> None:
    embed = EmbedCalls(monkeypatch)
    ids = _bulk(owner, _texts(6))
    resources = [wait_for(rid) for rid in ids]
    assert {r.status for r in resources} == {ResourceStatus.READY}
    assert {r.attempts for r in resources} == {1}
    assert len(embed.calls) == 1, "one model call for the whole batch"
    for resource in resources:
        passages = Passage.objects.filter(resource=resource).order_by("ordinal")
        assert passages.count() == resource.passage_count > 0
        assert list(passages.values_list("ordinal", flat=True)) == list(range(resource.passage_count))
        assert passages.first().text.startswith(f"Document {resource.title.split()[-1]}.")  # type: ignore[union-attr]
        assert passages.first().workspace_id == owner.workspace.id  # type: ignore[union-attr]


def test_single_uploads_waiting_in_the_queue_are_taken_as_one_batch(
    owner: Tenant, celery_worker: WorkController, monkeypatch: pytest.MonkeyPatch
) -> None:
    embed = EmbedCalls(monkeypatch)
    with transaction.atomic():  # all five queued at once, on commit
        ids = [
            services.resource_create_from_text(
                workspace=owner.workspace, text=f"Single upload {i}."
            ).resource.id
            for i in range(5)
        ]
    resources = [wait_for(rid) for rid in ids]
    assert {r.status for r in resources} == {ResourceStatus.READY}
    # The first task took all five; the others' own tasks found nothing left
    # to do and counted no attempt.
    assert {r.attempts for r in resources} == {1}
    assert len(embed.calls) == 1 and len(embed.calls[0]) == 5


def test_a_document_that_cannot_be_read_fails_alone(owner: Tenant, celery_worker: WorkController) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("good-1.txt", "A readable document about tides.")
        archive.writestr("broken.pdf", b"%PDF-1.4\n" + b"\x00garbage" * 50)
        archive.writestr("good-2.txt", "Another readable document, about winds.")
    response = owner.client().post(
        f"/api/v1/workspaces/{owner.workspace.id}/resources/batch/",
        buffer.getvalue(),
        content_type="application/zip",
    )
    assert response.status_code == 202, response.json()
    by_name = {d["name"]: wait_for(d["resource"]["id"]) for d in response.json()["data"]["documents"]}
    assert (by_name["broken.pdf"].status, by_name["broken.pdf"].error_code) == (
        ResourceStatus.FAILED,
        "corrupt_file",
    )
    assert not Passage.objects.filter(resource=by_name["broken.pdf"]).exists()
    for name in ("good-1.txt", "good-2.txt"):
        assert by_name[name].status == ResourceStatus.READY and by_name[name].passage_count == 1


def test_a_document_that_breaks_the_model_call_fails_alone_after_its_own_attempts(
    owner: Tenant, celery_worker: WorkController, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.INGEST_RETRY_BACKOFF_SECONDS = 0
    settings.INGEST_MAX_RETRIES = 2
    embed = EmbedCalls(monkeypatch, poison="POISON")
    documents = _texts(4)
    documents[2]["text"] = "POISON " + documents[2]["text"]
    ids = _bulk(owner, documents)
    resources = [wait_for(rid) for rid in ids]
    poisoned = resources[2]
    assert (poisoned.status, poisoned.error_code) == (ResourceStatus.FAILED, "ingest_failed")
    assert poisoned.attempts == 3 and poisoned.ingest_heartbeat_at is None
    assert not Passage.objects.filter(resource=poisoned).exists()
    for resource in resources[:2] + resources[3:]:
        assert resource.status == ResourceStatus.READY
        assert resource.attempts == 1, "a neighbour's failure used none of its attempts"
        assert Passage.objects.filter(resource=resource).count() == resource.passage_count > 0
    # The batch call, then each of the four alone, then the poisoned one's two retries (alone).
    alone = [call for call in embed.calls if any("POISON" in t for t in call)]
    assert len(embed.calls) == 1 + 4 + 2 and len(alone) == 1 + 1 + 2


def test_a_failing_passage_write_fails_only_its_own_resource(
    owner: Tenant, celery_worker: WorkController, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.INGEST_RETRY_BACKOFF_SECONDS = 0
    settings.INGEST_MAX_RETRIES = 1
    real = indexing.passages_replace_many

    def refuse_bad(*, items: Any) -> Any:
        if any(resource.title == "BAD" for resource, _ in items):
            raise RuntimeError("a constraint the database refused")
        return real(items=items)

    monkeypatch.setattr(indexing, "passages_replace_many", refuse_bad)
    ids = _bulk(
        owner,
        [
            {"title": "one", "text": "first"},
            {"title": "BAD", "text": "second"},
            {"title": "three", "text": "third"},
        ],
    )
    one, bad, three = (wait_for(rid) for rid in ids)
    assert (bad.status, bad.error_code, bad.attempts) == (ResourceStatus.FAILED, "ingest_failed", 2)
    assert (one.status, one.attempts, three.status, three.attempts) == ("ready", 1, "ready", 1)
    assert Passage.objects.filter(resource_id__in=[one.id, three.id]).count() == 2


def test_a_batch_reingest_swaps_each_resource_atomically(owner: Tenant) -> None:
    # A worker ingests them first, and is gone before the reingest below
    # marks them waiting: a worker still running would claim them from the
    # database itself (any "work is waiting" message takes what waits).
    purge_queue()
    with running_worker():
        ids = _bulk(
            owner, [{"title": f"long {i}", "text": long_text(paragraphs=20, seed=f"s{i}")} for i in range(3)]
        )
        ready = [wait_for(rid) for rid in ids]
    purge_queue()
    counts = {r.id: r.passage_count for r in ready}
    old_ids = set(Passage.objects.filter(resource_id__in=counts).values_list("id", flat=True))
    seen: list[dict[uuid.UUID, int]] = []
    stop = threading.Event()

    def watch() -> None:
        try:
            while not stop.is_set():
                with transaction.atomic():  # one snapshot for the three counts
                    rows = Passage.objects.filter(resource_id__in=counts).values_list(
                        "resource_id", flat=True
                    )
                    seen.append({rid: list(rows).count(rid) for rid in counts})
        finally:
            connection.close()

    Resource.objects.filter(pk__in=counts).update(ingest_heartbeat_at=timezone.now(), attempts=0)
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        results = ingestion.resources_ingest(resource_ids=list(counts), requeue=lambda rid, countdown: None)
    finally:
        stop.set()
        watcher.join()
    connection.close()
    assert results == {rid: ingestion.IngestResult.READY for rid in counts}
    assert len(seen) > 3
    assert all(snapshot == counts for snapshot in seen), (
        "retrieval saw a doubled, partial or missing document"
    )
    assert old_ids.isdisjoint(Passage.objects.filter(resource_id__in=counts).values_list("id", flat=True))
    assert {r.status for r in Resource.objects.filter(pk__in=counts)} == {ResourceStatus.READY}


def test_a_resource_held_by_a_running_batch_is_not_claimed_twice(owner: Tenant) -> None:
    resource = services.resource_create_from_text(workspace=owner.workspace, text="held").resource
    claimed = ingestion.resources_ingest_claim(resource_ids=[resource.id])
    assert [r.pk for r in claimed] == [resource.id]
    # Its own task arrives while the batch that claimed it still runs.
    assert ingestion.resource_ingest_claim(resource_id=resource.id) is None
    assert Resource.objects.get(pk=resource.id).attempts == 1
    # A redelivered message (its worker died) takes it over, counting an attempt.
    assert ingestion.resource_ingest_claim(resource_id=resource.id, take_over=True) is not None
    assert Resource.objects.get(pk=resource.id).attempts == 2


def test_retries_are_never_batched(owner: Tenant) -> None:
    first, second = (
        services.resource_create_from_text(workspace=owner.workspace, text=t).resource for t in ("one", "two")
    )
    Resource.objects.filter(pk=first.pk).update(attempts=1)  # a retry
    claimed = ingestion.resources_ingest_claim(resource_ids=[first.pk], fill=10)
    assert [r.pk for r in claimed] == [first.pk]
    fresh = ingestion.resources_ingest_claim(resource_ids=[uuid.uuid4()], fill=10)
    assert [r.pk for r in fresh] == [second.pk]
