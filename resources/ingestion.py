"""The ingestion of a resource: claim, parse, chunk, embed, store, or fail.

State machine (docs/ingestion.md)::

    pending -> processing -> ready | failed

``processing`` means an attempt holds the resource right now. A reingest of
a *ready* resource keeps it ready, and searchable with its old passages,
until the new passages replace them in one transaction. Resources are
ingested in batches across documents (:func:`resources_ingest`: one model
call and one passage write per batch), each still parsed, counted, swapped
and failed on its own (docs/ingestion.md, "Batches across documents"). Progress
of any queued or running ingestion is tracked by ``ingest_heartbeat_at``; the
sweep re-queues stale ones and fails those out of attempts.

This is the one module of ``resources`` that calls ``retrieval`` (to embed
and to write passages, through ``retrieval.indexing``): retrieval depends on
resources, and ingestion is the deliberate, single back-edge
(docs/architecture.md).
"""

from __future__ import annotations

import functools
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from celery.exceptions import SoftTimeLimitExceeded
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


def _held(resource: Resource, now: datetime) -> bool:
    """Another attempt is running now: ``processing`` with a live heartbeat.

    A resource is ``processing`` only while an attempt runs; it goes back to
    ``pending`` when the attempt hands it to a retry, and when the sweep
    re-queues it after its heartbeat stopped.
    """
    heartbeat = resource.ingest_heartbeat_at
    stale_after = timedelta(seconds=settings.INGEST_STALE_AFTER_SECONDS)
    live = heartbeat is not None and heartbeat > now - stale_after
    return resource.status == ResourceStatus.PROCESSING and live


def _claim(resource: Resource, now: datetime) -> None:
    resource.attempts += 1
    resource.ingest_heartbeat_at = now
    if resource.status != ResourceStatus.READY:
        resource.status = ResourceStatus.PROCESSING
        resource.status_changed_at = now
    resource.save()


def resource_ingest_claim(*, resource_id: uuid.UUID, take_over: bool = False) -> Resource | None:
    """Start an attempt: count it and mark the resource processing.

    ``None`` when there is nothing to do: the resource is gone, or no
    ingestion is outstanding (a duplicate delivery of a finished task), or
    another attempt holds it (a batch claimed it; ``take_over`` claims it
    anyway, for a redelivered message whose worker died), or it ran out of
    attempts (then it is marked failed).
    """
    claimed = resources_ingest_claim(resource_ids=[resource_id], take_over=take_over)
    return claimed[0] if claimed else None


def resources_ingest_claim(
    *, resource_ids: Sequence[uuid.UUID], fill: int = 0, take_over: bool = False
) -> list[Resource]:
    """Claim the named resources (as :func:`resource_ingest_claim` does each),
    then, if all of them are first attempts, up to ``fill`` more pending
    first attempts, oldest first, that no one else holds. Retries are never
    batched: they run alone, after their backoff, so a document that broke
    its batch once cannot break another."""
    now = timezone.now()
    claimed: list[Resource] = []
    exhausted: list[tuple[uuid.UUID, int]] = []
    with transaction.atomic():
        # In id order, so that two claims of overlapping batches cannot deadlock.
        named = Resource.objects.select_for_update().filter(pk__in=resource_ids).order_by("pk")
        batchable = True
        for resource in named:
            if resource.ingest_heartbeat_at is None or (_held(resource, now) and not take_over):
                continue
            if resource.attempts >= max_attempts():
                exhausted.append((resource.pk, resource.attempts))
                continue
            batchable = batchable and resource.attempts == 0
            _claim(resource, now)
            claimed.append(resource)
        if fill > 0 and batchable:
            more = (
                Resource.objects.select_for_update(skip_locked=True)
                .filter(status=ResourceStatus.PENDING, attempts=0, ingest_heartbeat_at__isnull=False)
                .exclude(pk__in=resource_ids)
                .order_by("status_changed_at")[:fill]
            )
            for resource in more:
                _claim(resource, now)
                claimed.append(resource)
    for resource_id, attempts in exhausted:
        resource_fail(resource_id=resource_id, code="worker_lost", message=_worker_lost_message(attempts))
    return claimed


Requeue = Callable[[uuid.UUID, int], None]

# While a batch parses its documents one by one, it refreshes the heartbeat
# of all of them at least this often (well within INGEST_STALE_AFTER_SECONDS).
BATCH_HEARTBEAT_SECONDS = 10.0


def resource_ingest(*, resource_id: uuid.UUID, requeue: Requeue | None = None) -> str:
    """Parse, chunk, embed and store one resource, alone. Safe to run twice.

    Returns the final state (``ready``, ``failed``, ``retrying`` or
    ``skipped``): :func:`resources_ingest` with a batch of one. Without
    ``requeue`` a resource handed to a retry waits, ``pending``, for the
    sweep to queue it.
    """
    results = resources_ingest(resource_ids=[resource_id], requeue=requeue or _leave_to_the_sweep)
    return results.get(resource_id, "skipped")


def _leave_to_the_sweep(resource_id: uuid.UUID, countdown: int) -> None:
    pass


def resources_ingest(
    *,
    resource_ids: Sequence[uuid.UUID],
    requeue: Requeue,
    fill: int = 0,
    take_over: bool = False,
) -> dict[uuid.UUID, str]:
    """Ingest the named resources and up to ``fill`` other pending ones as
    one batch: each is parsed and chunked alone (:func:`resource_prepare`),
    then all their chunks go through the model in one call and their
    passages are swapped in one transaction (one DELETE, one multi-row
    INSERT, so one run of the lexeme triggers).

    The guarantees of a single ingestion hold per resource: attempts are
    counted on each row; each swap is atomic; a document that cannot be read
    fails alone; if the shared model call or the shared transaction fails,
    each resource is tried again alone, so one bad document never fails its
    neighbours. A resource whose own step fails is handed to a retry
    (``requeue(id, countdown)``, on commit) or, out of attempts, fails with
    ``ingest_failed``. Returns each claimed resource's final state.
    """
    claimed = resources_ingest_claim(resource_ids=resource_ids, fill=fill, take_over=take_over)
    if not claimed:
        return {}
    results: dict[uuid.UUID, str] = {}
    parsing: list[uuid.UUID] = []  # the document being parsed, if any
    try:
        _ingest_claimed(claimed, requeue, results, parsing)
    except SoftTimeLimitExceeded:
        _soft_time_limit(claimed, requeue, results, parsing)
    return results


def _soft_time_limit(
    claimed: list[Resource], requeue: Requeue, results: dict[uuid.UUID, str], parsing: list[uuid.UUID]
) -> None:
    """INGEST_TASK_SOFT_TIME_LIMIT in the middle of a batch: the document
    being parsed (or the only one left) fails with ``ingest_timeout``, not
    retried; the others go back to a retry alone, so the time a slow
    neighbour took is never blamed on them."""
    unfinished = [r.pk for r in claimed if r.pk not in results]
    culprit = parsing[0] if parsing else (unfinished[0] if len(unfinished) == 1 else None)
    seconds = settings.INGEST_TASK_SOFT_TIME_LIMIT
    for resource_id in unfinished:
        if resource_id == culprit:
            message = timeout_message(seconds, setting="INGEST_TASK_SOFT_TIME_LIMIT")
            resource_fail(resource_id=resource_id, code="ingest_timeout", message=message)
            results[resource_id] = ResourceStatus.FAILED
        else:
            results[resource_id] = _retry_or_fail(
                resource_id, TimeoutError("the batch ran out of time"), requeue
            )


def _ingest_claimed(
    claimed: list[Resource], requeue: Requeue, results: dict[uuid.UUID, str], parsing: list[uuid.UUID]
) -> None:
    files = ResourceFile.objects.filter(resource_id__in=[r.pk for r in claimed])
    stored = dict(files.values_list("resource_id", "data"))
    prepared: list[tuple[Resource, list[Chunk]]] = []
    beat = time.monotonic()
    for resource in claimed:
        if time.monotonic() - beat > BATCH_HEARTBEAT_SECONDS:
            # Slow documents ahead of the others: the others are alive too.
            _heartbeat_many([r.pk for r in claimed])
            beat = time.monotonic()
        if resource.pk not in stored:  # deleted since the claim
            results[resource.pk] = "skipped"
            continue
        parsing[:] = [resource.pk]
        try:
            chunks = resource_prepare(resource=resource, data=bytes(stored.pop(resource.pk)))
        except SoftTimeLimitExceeded:
            raise
        except Exception as exc:  # retried or failed per resource
            results[resource.pk] = _retry_or_fail(resource.pk, exc, requeue)
            continue
        finally:
            parsing.clear()
        if chunks is None:
            results[resource.pk] = ResourceStatus.FAILED
        else:
            prepared.append((resource, chunks))

    embedded = _embed_batch(prepared, requeue, results)
    if len(embedded) > 1:
        try:
            for resource_id, swapped in resources_passages_store(embedded=embedded).items():
                results[resource_id] = ResourceStatus.READY if swapped else "skipped"
            return
        except SoftTimeLimitExceeded:
            raise
        except Exception:  # each one again alone below
            logger.warning("storing a batch of %d resources failed; storing each alone", len(embedded))
    for resource_id, one in embedded.items():
        try:
            swapped = resource_passages_store(resource_id=resource_id, embedded=one)
        except SoftTimeLimitExceeded:
            raise
        except Exception as exc:  # retried or failed per resource
            results[resource_id] = _retry_or_fail(resource_id, exc, requeue)
            continue
        results[resource_id] = ResourceStatus.READY if swapped else "skipped"


def _embed_batch(
    prepared: list[tuple[Resource, list[Chunk]]], requeue: Requeue, results: dict[uuid.UUID, str]
) -> dict[uuid.UUID, indexing.EmbeddedChunks]:
    """One model call for every prepared resource; if it fails, one each."""
    ids = [resource.pk for resource, _ in prepared]
    if len(prepared) > 1:
        try:
            together = indexing.chunks_embed(
                chunks=[chunk for _, chunks in prepared for chunk in chunks],
                on_progress=lambda: _heartbeat_many(ids),
            )
        except SoftTimeLimitExceeded:
            raise
        except Exception:  # each one again alone below
            logger.warning("embedding a batch of %d resources failed; embedding each alone", len(prepared))
        else:
            out: dict[uuid.UUID, indexing.EmbeddedChunks] = {}
            offset = 0
            for resource, chunks in prepared:
                vectors = together.vectors[offset : offset + len(chunks)]
                out[resource.pk] = indexing.EmbeddedChunks(chunks, vectors, together.model_name)
                offset += len(chunks)
            return out
    out = {}
    for resource, chunks in prepared:
        _heartbeat(resource.pk)
        beat = functools.partial(_heartbeat, resource.pk)
        try:
            out[resource.pk] = indexing.chunks_embed(chunks=chunks, on_progress=beat)
        except SoftTimeLimitExceeded:
            raise
        except Exception as exc:  # retried or failed per resource
            results[resource.pk] = _retry_or_fail(resource.pk, exc, requeue)
    return out


def _retry_or_fail(resource_id: uuid.UUID, exc: Exception, requeue: Requeue) -> str:
    """After an unexpected error of one resource: another attempt after its
    backoff (the resource goes back to ``pending``: no attempt holds it), or
    ``failed`` with ``ingest_failed`` when its attempts are used up."""
    with transaction.atomic():
        resource = Resource.objects.select_for_update().filter(pk=resource_id).first()
        if resource is None:
            return "skipped"
        if resource.attempts < max_attempts():
            now = timezone.now()
            resource.ingest_heartbeat_at = now
            if resource.status == ResourceStatus.PROCESSING:
                resource.status = ResourceStatus.PENDING
                resource.status_changed_at = now
            resource.save()
            logger.warning(
                "ingestion of %s failed (attempt %d), retrying", resource_id, resource.attempts, exc_info=exc
            )
            requeue(resource_id, retry_countdown(resource.attempts))
            return "retrying"
    logger.error("ingestion of %s failed after its last attempt", resource_id, exc_info=exc)
    resource_fail(
        resource_id=resource_id,
        code="ingest_failed",
        message=f"Ingestion failed after {max_attempts()} attempts ({type(exc).__name__}). "
        "Reingest to try again.",
    )
    return ResourceStatus.FAILED


def resource_release(*, resource_id: uuid.UUID, requeue: Requeue) -> str:
    """Hand a resource whose batch ended early to a retry alone (or fail it,
    out of attempts), as after an error of its own."""
    return _retry_or_fail(resource_id, TimeoutError("its batch ended early"), requeue)


def retry_countdown(attempts: int) -> int:
    """Exponential backoff: base, 2 x base, 4 x base, ... capped at 10 minutes."""
    base = int(settings.INGEST_RETRY_BACKOFF_SECONDS)
    return int(min(600, base * 2 ** max(attempts - 1, 0)))


def _heartbeat_many(resource_ids: list[uuid.UUID]) -> None:
    Resource.objects.filter(pk__in=resource_ids, ingest_heartbeat_at__isnull=False).update(
        ingest_heartbeat_at=timezone.now()
    )


def _heartbeat(resource_id: uuid.UUID) -> None:
    Resource.objects.filter(pk=resource_id, ingest_heartbeat_at__isnull=False).update(
        ingest_heartbeat_at=timezone.now()
    )


def heartbeat_interval() -> float:
    """How often a running parse refreshes its heartbeat: well within the stale age."""
    return float(min(60.0, settings.INGEST_STALE_AFTER_SECONDS / 5))


def timeout_message(seconds: float, *, setting: str) -> str:
    return (
        f"Ingestion took longer than {seconds:g} seconds ({setting}); limits are not retried. "
        "Split the document into smaller ones."
    )


def embedder_preload() -> None:
    """Load the embedding model now (a worker at start), not in its first task."""
    indexing.chunking_params()


def resource_prepare(*, resource: Resource, data: bytes) -> list[Chunk] | None:
    """The per-document part of an ingestion: parse and chunk, or fail the
    document (``None``) when it cannot be read. One resource at a time, in
    the single path and in batches alike; anything but a document error
    propagates (a retry)."""
    try:
        with heartbeat_while(
            functools.partial(_heartbeat, resource.pk),
            interval=heartbeat_interval(),
            limit=settings.INGEST_PARSE_TIMEOUT_SECONDS,
        ):
            return resource_chunks(data=data, content_type=resource.content_type)
    except ParseError as exc:
        resource_fail(resource_id=resource.pk, code=exc.code, message=exc.message)
        return None


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


def resources_passages_store(*, embedded: dict[uuid.UUID, indexing.EmbeddedChunks]) -> dict[uuid.UUID, bool]:
    """:func:`resource_passages_store` for many resources in one transaction:
    each swap is atomic (the transaction holds them all), and retrieval sees
    all of a resource's old passages or all of its new ones. ``False`` for a
    resource deleted meanwhile."""
    with transaction.atomic():
        # In id order, as every claim locks, so that batches cannot deadlock.
        resources = list(Resource.objects.select_for_update().filter(pk__in=list(embedded)).order_by("pk"))
        counts = indexing.passages_replace_many(items=[(r, embedded[r.pk]) for r in resources])
        now = timezone.now()
        for resource in resources:
            if resource.status != ResourceStatus.READY:
                resource.status_changed_at = now
            resource.status = ResourceStatus.READY
            resource.error_code = ""
            resource.error_message = ""
            resource.passage_count = counts[resource.pk]
            resource.ingest_heartbeat_at = None
            resource.updated_at = now  # bulk_update skips auto_now
        Resource.objects.bulk_update(
            resources,
            [
                "status",
                "status_changed_at",
                "error_code",
                "error_message",
                "passage_count",
                "ingest_heartbeat_at",
                "updated_at",
            ],
        )
    found = {r.pk for r in resources}
    return {resource_id: resource_id in found for resource_id in embedded}


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
                # Back to pending: no attempt holds it any more (its worker
                # died or stalled), so the re-queued task claims it.
                resource.ingest_heartbeat_at = now
                fields = ["ingest_heartbeat_at", "updated_at"]
                if resource.status == ResourceStatus.PROCESSING:
                    resource.status = ResourceStatus.PENDING
                    resource.status_changed_at = now
                    fields += ["status", "status_changed_at"]
                resource.save(update_fields=fields)
                requeue(resource.id)
        if exhausted:
            resource_fail(
                resource_id=resource_id, code="worker_lost", message=_worker_lost_message(exhausted)
            )
    if touched:
        logger.info("sweep re-queued or failed %d stale ingestion(s)", touched)
    return touched
