"""Ingestion end to end through a real Celery worker, PostgreSQL + pgvector
and the real embedding model."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from celery.worker import WorkController
from django.db import connection
from django.utils import timezone
from pytest_django import Settings

from resources import ingestion, services
from resources.models import Resource, ResourceStatus
from resources.tasks import sweep_stale_resources
from retrieval import indexing
from retrieval.embeddings import get_embedder
from retrieval.models import EMBEDDING_DIMENSIONS, Passage, PassageUnits
from retrieval.tasks import unit_vectors_sweep
from retrieval.unit_vectors import digest, unit_texts, unpack
from tests.conftest import Tenant
from tests.resources.files import long_text, make_pdf
from tests.worker import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _upload(tenant: Tenant, name: str, data: bytes, **extra: Any) -> dict[str, Any]:
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = tenant.client("admin").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/resources/",
        {"file": SimpleUploadedFile(name, data), **extra},
        format="multipart",
    )
    assert response.status_code == 202, response.json()
    created: dict[str, Any] = response.json()["data"]
    return created


def test_upload_becomes_ready_with_passages_embedded_from_their_text(
    owner: Tenant, celery_worker: WorkController
) -> None:
    text = long_text(paragraphs=10)
    created = _upload(owner, "notes.txt", text.encode())
    assert created["status"] == "pending"

    resource = wait_for(created["id"])

    assert resource.status == ResourceStatus.READY, resource.error_message
    passages = list(Passage.objects.filter(resource=resource).order_by("ordinal"))
    assert resource.passage_count == len(passages) > 1
    assert [p.ordinal for p in passages] == list(range(len(passages)))
    expected = np.array(get_embedder().embed_passages([p.text for p in passages]))
    stored = np.array([np.asarray(p.embedding) for p in passages])
    assert np.allclose(stored, expected, atol=1e-5)
    for passage in passages:
        assert passage.text == text[passage.char_start : passage.char_end]
        assert passage.workspace_id == owner.workspace.id
        assert passage.embedding_model == get_embedder().model_name
        assert 0 < passage.token_count <= 200
    body = (
        owner.client("chat").get(f"/api/v1/workspaces/{owner.workspace.id}/resources/{resource.id}/").json()
    )
    assert body["data"]["status"] == "ready" and body["data"]["error"] is None


def test_pdf_passages_keep_their_page_number(owner: Tenant, celery_worker: WorkController) -> None:
    pages = [f"Page {n} talks about topic {n}. " * 3 for n in range(1, 4)]
    created = _upload(owner, "doc.pdf", make_pdf(pages))
    resource = wait_for(created["id"])
    assert resource.status == ResourceStatus.READY
    assert resource.content_type == "application/pdf"
    assert Passage.objects.get(resource=resource, ordinal=0).page == 1


def test_corrupt_pdf_fails_with_a_code(owner: Tenant, celery_worker: WorkController) -> None:
    created = _upload(owner, "broken.pdf", b"%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage without xref")
    resource = wait_for(created["id"])
    assert resource.status == ResourceStatus.FAILED
    assert resource.error_code == "corrupt_file"
    error = owner.client().get(f"/api/v1/workspaces/{owner.workspace.id}/resources/{resource.id}/").json()
    assert error["data"]["error"]["code"] == "corrupt_file"
    assert "PDF" in error["data"]["error"]["message"]
    assert not Passage.objects.filter(resource=resource).exists()


def test_empty_file_fails_as_empty_document(owner: Tenant, celery_worker: WorkController) -> None:
    resource = wait_for(_upload(owner, "empty.txt", b"  \n\n  ")["id"])
    assert (resource.status, resource.error_code) == (ResourceStatus.FAILED, "empty_document")


def test_text_over_the_extracted_limit_fails_as_text_too_long(
    owner: Tenant, celery_worker: WorkController, settings: Settings
) -> None:
    settings.MAX_EXTRACTED_CHARS = 1000
    resource = wait_for(_upload(owner, "long.md", ("# Head\n\n" + "word " * 400).encode())["id"])
    assert (resource.status, resource.error_code) == (ResourceStatus.FAILED, "text_too_long")


def test_the_same_file_twice_is_one_resource(owner: Tenant, celery_worker: WorkController) -> None:
    data = long_text(paragraphs=2).encode()
    first = _upload(owner, "a.txt", data)
    again = owner.client().post(
        f"/api/v1/workspaces/{owner.workspace.id}/resources/",
        {"file": __import__("io").BytesIO(data)},
        format="multipart",
    )
    assert again.status_code == 200
    assert again.json()["data"]["id"] == first["id"]
    wait_for(first["id"])
    assert Resource.objects.filter(workspace=owner.workspace).count() == 1


def test_delete_removes_passages_from_retrieval(owner: Tenant, celery_worker: WorkController) -> None:
    resource = wait_for(_upload(owner, "a.txt", long_text(paragraphs=4).encode())["id"])
    assert Passage.objects.filter(resource_id=resource.id).exists()
    response = owner.client().delete(f"/api/v1/workspaces/{owner.workspace.id}/resources/{resource.id}/")
    assert response.status_code == 204
    assert not Passage.objects.filter(resource_id=resource.id).exists()
    assert not Resource.objects.filter(pk=resource.id).exists()


def test_reingest_swaps_passages_without_ever_doubling_or_hiding_them(
    owner: Tenant, celery_worker: WorkController
) -> None:
    resource = wait_for(_upload(owner, "a.txt", long_text(paragraphs=30).encode())["id"])
    count = resource.passage_count
    old_ids = set(Passage.objects.filter(resource=resource).values_list("id", flat=True))
    seen: list[tuple[int, str]] = []
    stop = threading.Event()

    def watch() -> None:
        # A separate connection, as retrieval would have.
        try:
            while not stop.is_set():
                row = Resource.objects.get(pk=resource.id)
                seen.append((Passage.objects.filter(resource_id=resource.id).count(), row.status))
        finally:
            connection.close()

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        response = owner.client().post(
            f"/api/v1/workspaces/{owner.workspace.id}/resources/{resource.id}/reingest/"
        )
        assert response.status_code == 202
        assert response.json()["data"]["status"] == "ready"
        done = wait_for(resource.id)
    finally:
        stop.set()
        watcher.join()

    assert done.status == ResourceStatus.READY and done.passage_count == count
    assert len(seen) > 5
    assert {n for n, _ in seen} == {count}, "retrieval saw a doubled or partial document"
    assert {s for _, s in seen} == {"ready"}, "the resource left retrieval during its reingest"
    assert old_ids.isdisjoint(Passage.objects.filter(resource=resource).values_list("id", flat=True))


def test_sweep_requeues_a_resource_stuck_in_processing(owner: Tenant, celery_worker: WorkController) -> None:
    # What a worker killed mid-task leaves behind: processing, one attempt
    # used, a heartbeat that stopped, and no message left to deliver.
    outcome = services.resource_create(
        workspace=owner.workspace, upload=services.Upload(data=b"x", title="t")
    )
    wait_for(outcome.resource.id)
    Passage.objects.filter(resource=outcome.resource).delete()
    stale = timezone.now() - timedelta(hours=1)
    Resource.objects.filter(pk=outcome.resource.id).update(
        status=ResourceStatus.PROCESSING, attempts=1, ingest_heartbeat_at=stale, status_changed_at=stale
    )

    assert sweep_stale_resources() == 1  # beat runs this; the re-queued task goes to the worker

    resource = wait_for(outcome.resource.id)
    assert resource.status == ResourceStatus.READY
    assert resource.attempts == 2
    assert Passage.objects.filter(resource=resource).count() == resource.passage_count == 1


def test_sweep_fails_a_resource_that_used_up_its_attempts(
    owner: Tenant, celery_worker: WorkController, settings: Settings
) -> None:
    outcome = services.resource_create(
        workspace=owner.workspace, upload=services.Upload(data=b"y", title="t")
    )
    wait_for(outcome.resource.id)
    stale = timezone.now() - timedelta(hours=1)
    Resource.objects.filter(pk=outcome.resource.id).update(
        status=ResourceStatus.PROCESSING,
        attempts=settings.INGEST_MAX_RETRIES + 1,
        ingest_heartbeat_at=stale,
        status_changed_at=stale,
    )
    assert sweep_stale_resources() == 1  # beat runs this; the re-queued task goes to the worker
    resource = Resource.objects.get(pk=outcome.resource.id)
    assert (resource.status, resource.error_code) == (ResourceStatus.FAILED, "worker_lost")
    assert resource.ingest_heartbeat_at is None
    assert not Passage.objects.filter(resource=resource).exists()


def test_transient_errors_are_retried_then_the_resource_fails(
    owner: Tenant, celery_worker: WorkController, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.INGEST_RETRY_BACKOFF_SECONDS = 0
    settings.INGEST_MAX_RETRIES = 2
    calls: list[int] = []

    def broken(*, chunks: Any, on_progress: Any = None, model: str | None = None) -> Any:
        calls.append(1)
        raise ConnectionError("embedding backend went away")

    monkeypatch.setattr(indexing, "chunks_embed", broken)
    resource = wait_for(_upload(owner, "a.txt", b"some text to embed")["id"])
    assert (resource.status, resource.error_code) == (ResourceStatus.FAILED, "ingest_failed")
    assert len(calls) == resource.attempts == 3


def test_a_transient_error_then_success_ends_ready(
    owner: Tenant, celery_worker: WorkController, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.INGEST_RETRY_BACKOFF_SECONDS = 0
    real = indexing.chunks_embed
    calls: list[int] = []

    def flaky(*, chunks: Any, on_progress: Any = None, model: str | None = None) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("embedding backend went away")
        return real(chunks=chunks, on_progress=on_progress, model=model)

    monkeypatch.setattr(indexing, "chunks_embed", flaky)
    resource = wait_for(_upload(owner, "a.txt", b"some other text to embed")["id"])
    assert resource.status == ResourceStatus.READY
    assert resource.attempts == 2 and resource.passage_count == 1


def test_running_the_ingestion_twice_at_once_never_duplicates_passages(
    owner: Tenant, celery_worker: WorkController
) -> None:
    resource = wait_for(_upload(owner, "a.txt", long_text(paragraphs=6).encode())["id"])
    count = resource.passage_count
    # Two deliveries of one task running side by side (e.g. a redelivery
    # while the first worker was still alive).
    Resource.objects.filter(pk=resource.id).update(ingest_heartbeat_at=timezone.now(), attempts=0)
    results: list[str] = []

    def run() -> None:
        try:
            results.append(ingestion.resource_ingest(resource_id=resource.id, requeue=lambda *_: None))
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert "ready" in results
    assert Passage.objects.filter(resource=resource).count() == count
    assert Resource.objects.get(pk=resource.id).passage_count == count


def test_the_worker_makes_the_answer_units_vectors_after_the_document_is_ready(
    owner: Tenant, celery_worker: WorkController, settings: Settings
) -> None:
    """Ready first, with each passage's row queued empty; then the periodic
    sweep (scheduled by beat) fills them through the same worker."""
    schedule = {entry["task"]: entry for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    sweep = schedule["retrieval.unit_vectors_sweep"]
    assert sweep["schedule"] == settings.UNIT_VECTORS_SWEEP_SECONDS
    # No pile-up: beat queues a sweep at most once at a time (daneshyar/celery.py).
    assert settings.CELERY_BEAT_SCHEDULER == "daneshyar.celery:QueuedOnceScheduler"
    resource = wait_for(_upload(owner, "notes.txt", long_text(paragraphs=6).encode())["id"])
    assert resource.status == ResourceStatus.READY
    passages = list(Passage.objects.filter(resource=resource))
    queued = PassageUnits.objects.filter(passage__resource=resource)
    assert queued.count() == len(passages) > 1

    unit_vectors_sweep.delay()
    deadline = time.monotonic() + 60
    while queued.filter(vectors=b"").exists():
        assert time.monotonic() < deadline, "the sweep did not fill the queued rows"
        time.sleep(0.1)
    for passage in passages:
        stored = unpack(bytes(queued.get(passage=passage).vectors), dimensions=EMBEDDING_DIMENSIONS)
        assert set(stored) == {digest(text) for text in unit_texts(passage.text)}
