"""The ingestion of a resource: claim, parse, chunk, embed, store, or fail.

State machine (docs/ingestion.md)::

    pending -> processing -> ready | failed

A reingest of a *ready* resource keeps it ready, and searchable with its old
passages, until the new passages replace them in one transaction. Progress
of any queued or running ingestion is tracked by ``ingest_heartbeat_at``; the
sweep re-queues stale ones and fails those out of attempts.

This is the one module of ``resources`` that calls ``retrieval`` (to embed
and to write passages, through ``retrieval.indexing``): retrieval depends on
resources, and ingestion is the deliberate, single back-edge
(docs/architecture.md).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from resources.chunking import Chunk, chunk_document
from resources.heartbeat import heartbeat_while
from resources.models import Resource, ResourceFile, ResourceStatus
from resources.parsing import ParseError, parse_document
from retrieval import indexing

logger = logging.getLogger(__name__)

UNFINISHED = (ResourceStatus.PENDING, ResourceStatus.PROCESSING)


def max_attempts() -> int:
    return int(settings.INGEST_MAX_RETRIES) + 1


def resource_fail(*, resource_id: uuid.UUID, code: str, message: str) -> None:
    """End an ingestion as ``failed``; passages go, so retrieval never uses them."""
    with transaction.atomic():
        resource = Resource.objects.select_for_update().filter(pk=resource_id).first()
        if resource is None:
            return
        indexing.passages_delete(resource_id=resource_id)
        resource.status = ResourceStatus.FAILED
        resource.status_changed_at = timezone.now()
        resource.error_code = code[:64]
        resource.error_message = message
        resource.passage_count = 0
        resource.ingest_heartbeat_at = None
        resource.save()
    logger.warning("ingestion of resource %s failed: %s: %s", resource_id, code, message)


def _worker_lost_message(attempts: int) -> str:
    return (
        f"Ingestion did not finish after {attempts} attempts: the worker stopped or timed out "
        "each time. Reingest to try again."
    )


def resource_ingest_claim(*, resource_id: uuid.UUID) -> Resource | None:
    """Start an attempt: count it and mark the resource processing.

    ``None`` when there is nothing to do: the resource is gone, or no
    ingestion is outstanding (a duplicate delivery of a finished task), or it
    ran out of attempts (then it is marked failed).
    """
    now = timezone.now()
    with transaction.atomic():
        resource = Resource.objects.select_for_update().filter(pk=resource_id).first()
        if resource is None or resource.ingest_heartbeat_at is None:
            return None
        if resource.attempts >= max_attempts():
            exhausted = resource.attempts
        else:
            exhausted = 0
            resource.attempts += 1
            resource.ingest_heartbeat_at = now
            if resource.status != ResourceStatus.READY:
                resource.status = ResourceStatus.PROCESSING
                resource.status_changed_at = now
            resource.save()
    if exhausted:
        resource_fail(resource_id=resource_id, code="worker_lost", message=_worker_lost_message(exhausted))
        return None
    return resource


def resource_ingest(*, resource_id: uuid.UUID) -> str:
    """Parse, chunk, embed and store one resource. Safe to run twice.

    Returns the final state (``ready``, ``failed``, or ``skipped``). Errors of
    the document (:class:`ParseError`) fail it at once; anything else
    propagates so that the task retries.
    """
    resource = resource_ingest_claim(resource_id=resource_id)
    if resource is None:
        return "skipped"
    stored = ResourceFile.objects.filter(resource_id=resource_id).values_list("data", flat=True).first()
    if stored is None:  # deleted since the claim
        return "skipped"
    try:
        with heartbeat_while(
            lambda: _heartbeat(resource_id),
            interval=heartbeat_interval(),
            limit=settings.INGEST_PARSE_TIMEOUT_SECONDS,
        ):
            chunks = resource_chunks(data=bytes(stored), content_type=resource.content_type)
    except ParseError as exc:
        resource_fail(resource_id=resource_id, code=exc.code, message=exc.message)
        return ResourceStatus.FAILED
    embedded = indexing.chunks_embed(chunks=chunks, on_progress=lambda: _heartbeat(resource_id))
    swapped = resource_passages_store(resource_id=resource_id, embedded=embedded)
    return ResourceStatus.READY if swapped else "skipped"


def _heartbeat(resource_id: uuid.UUID) -> None:
    Resource.objects.filter(pk=resource_id, ingest_heartbeat_at__isnull=False).update(
        ingest_heartbeat_at=timezone.now()
    )


def heartbeat_interval() -> float:
    """How often a running parse refreshes its heartbeat: well within the stale age."""
    return float(min(60.0, settings.INGEST_STALE_AFTER_SECONDS / 5))


def embedder_preload() -> None:
    """Load the embedding model now (a worker at start), not in its first task."""
    indexing.chunking_params()


def resource_chunks(*, data: bytes, content_type: str) -> list[Chunk]:
    """Parse and chunk a document for the embedding model in use."""
    params = indexing.chunking_params()
    document = parse_document(data, content_type=content_type)
    chunks = chunk_document(
        document, tokenizer=params.tokenizer, size=params.size, overlap=settings.CHUNK_OVERLAP_TOKENS
    )
    if not chunks:
        raise ParseError("empty_document", "The document contains no extractable text.")
    return chunks


def resource_passages_store(*, resource_id: uuid.UUID, embedded: indexing.EmbeddedChunks) -> bool:
    """Swap the resource's passages for new ones and mark it ready, atomically.

    Retrieval sees either the old passages or the new ones, never both nor
    a part. ``False`` if the resource was deleted meanwhile.
    """
    with transaction.atomic():
        resource = Resource.objects.select_for_update().filter(pk=resource_id).first()
        if resource is None:
            return False
        count = indexing.passages_replace(resource=resource, embedded=embedded)
        now = timezone.now()
        if resource.status != ResourceStatus.READY:
            resource.status_changed_at = now
        resource.status = ResourceStatus.READY
        resource.error_code = ""
        resource.error_message = ""
        resource.passage_count = count
        resource.ingest_heartbeat_at = None
        resource.save()
    return True


def resource_retry_allowed(*, resource_id: uuid.UUID) -> int | None:
    """The attempt count if another attempt is allowed, else ``None``."""
    attempts = Resource.objects.filter(pk=resource_id).values_list("attempts", flat=True).first()
    if attempts is None or attempts >= max_attempts():
        return None
    return int(attempts)


def resources_sweep_stale(
    *,
    requeue: Callable[[uuid.UUID], None],
    stale_after: timedelta | None = None,
    limit: int = 500,
) -> int:
    """Re-queue ingestions whose heartbeat stopped (a crashed or restarted
    worker, a lost message); fail those out of attempts. Returns how many
    were touched.

    ``requeue`` is called inside the transaction that refreshes the row's
    heartbeat (the task module passes an on-commit enqueue).
    """
    if stale_after is None:
        stale_after = timedelta(seconds=settings.INGEST_STALE_AFTER_SECONDS)
    now = timezone.now()
    cutoff = now - stale_after
    stale = Q(ingest_heartbeat_at__lt=cutoff) | Q(
        status__in=UNFINISHED, ingest_heartbeat_at__isnull=True, status_changed_at__lt=cutoff
    )
    ids = list(
        Resource.objects.filter(stale).order_by("status_changed_at").values_list("id", flat=True)[:limit]
    )
    touched = 0
    for resource_id in ids:
        exhausted = 0
        with transaction.atomic():
            # Skip a row a worker holds right now: it is alive after all.
            resource = (
                Resource.objects.select_for_update(skip_locked=True).filter(stale, pk=resource_id).first()
            )
            if resource is None:
                continue
            touched += 1
            if resource.attempts >= max_attempts():
                exhausted = resource.attempts
            else:
                resource.ingest_heartbeat_at = now
                resource.save(update_fields=["ingest_heartbeat_at", "updated_at"])
                requeue(resource.id)
        if exhausted:
            resource_fail(
                resource_id=resource_id, code="worker_lost", message=_worker_lost_message(exhausted)
            )
    if touched:
        logger.info("sweep re-queued or failed %d stale ingestion(s)", touched)
    return touched
