"""Fair ingestion: one organization's backlog never holds another
organization's document behind it. The queue is one FIFO; each task takes
the next batch by the fair claim (the organization served longest ago
first), whatever ids its message names. Through a real Celery worker,
PostgreSQL and the real embedding model."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone
from pytest_django import Settings

from resources import ingestion, services
from resources.chunking import Chunk
from resources.models import IngestTurn, Resource, ResourceStatus
from retrieval import indexing
from tests.conftest import Tenant
from tests.worker import batch_upload, purge_queue, running_worker, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


class EmbedCalls:
    """Wraps indexing.chunks_embed: the texts of each model call, in order
    (one call per claimed batch)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.calls: list[list[str]] = []
        self.real = indexing.chunks_embed
        monkeypatch.setattr(indexing, "chunks_embed", self)

    def __call__(self, *, chunks: Sequence[Chunk], on_progress: Any = None, model: str | None = None) -> Any:
        self.calls.append([c.text for c in chunks])
        return self.real(chunks=chunks, on_progress=on_progress, model=model)

    def first_call_with(self, marker: str) -> int:
        return next(n for n, texts in enumerate(self.calls) if any(marker in t for t in texts))


def test_another_organizations_document_is_not_queued_behind_a_backlog(
    owner: Tenant, outsider: Tenant, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Regression: every message named its documents and the queue is FIFO,
    # so a document uploaded after a bulk ingestion waited for all of it.
    settings.INGEST_BATCH_SIZE = 4
    embed = EmbedCalls(monkeypatch)
    purge_queue()
    backlog = batch_upload(owner, 40, "BACKLOG")  # ten messages ahead in the queue
    late = services.resource_create_from_text(workspace=outsider.workspace, text="LATE one small document.")
    try:
        with running_worker():
            assert wait_for(late.resource.id, timeout=120).status == ResourceStatus.READY
            for resource_id in backlog:
                assert wait_for(resource_id, timeout=300).status == ResourceStatus.READY
    finally:
        purge_queue()
    # The organization that was never served comes first or second (both
    # were never served: the tie goes by id); FIFO would have put it last.
    assert embed.first_call_with("LATE") <= 1, [len(call) for call in embed.calls]
    assert len(embed.calls) == 11
    assert set(Resource.objects.values_list("attempts", flat=True)) == {1}


def _texts(tenant: Tenant, tag: str, count: int) -> list[Resource]:
    with transaction.atomic():
        return [
            services.resource_create_from_text(workspace=tenant.workspace, text=f"{tag} {i}").resource
            for i in range(count)
        ]


def test_claims_take_turns_across_organizations(tenant_factory: Any) -> None:
    first, second, third = (tenant_factory(name) for name in ("First", "Second", "Third"))
    a = _texts(first, "a", 8)
    _texts(second, "b", 8)
    _texts(third, "c", 1)
    now = timezone.now()
    IngestTurn.objects.create(organization=first.organization, served_at=now - timedelta(hours=2))
    IngestTurn.objects.create(organization=second.organization, served_at=now - timedelta(hours=1))
    turns = []
    # Every message names a document of the big organization; it does not matter.
    while claimed := ingestion.resources_ingest_claim(resource_ids=[a[0].pk], fill=3):
        turns.append(" ".join(r.title for r in claimed))
    # Never served first, then the one served longest ago; a batch with room
    # left goes on to the next organization's documents, oldest first.
    assert turns == ["c 0 a 0 a 1", "b 0 b 1 b 2", "a 2 a 3 a 4", "b 3 b 4 b 5", "a 5 a 6 a 7", "b 6 b 7"]
    assert set(Resource.objects.values_list("attempts", flat=True)) == {1}


def test_a_named_retry_is_claimed_alone_and_a_named_first_attempt_waits_its_turn(owner: Tenant) -> None:
    retry, waiting = (r for r in _texts(owner, "named", 2))
    Resource.objects.filter(pk=retry.pk).update(attempts=1)
    claimed = ingestion.resources_ingest_claim(resource_ids=[retry.pk], fill=5)
    assert [r.pk for r in claimed] == [retry.pk]
    # Named, but another pending first attempt of the same organization is
    # older: the fair claim takes both, oldest first.
    newer = _texts(owner, "newer", 1)[0]
    claimed = ingestion.resources_ingest_claim(resource_ids=[newer.pk], fill=5)
    assert [r.pk for r in claimed] == [waiting.pk, newer.pk]
    assert ingestion.resources_claimed_by("") == []
