"""Writes for resources: upload, delete, reingest, and the ingestion itself.

Ingestion state machine (docs/ingestion.md):

    pending -> processing -> ready | failed

A reingest of a *ready* resource keeps it ready, and searchable with its old
passages, until the new passages replace them in one transaction. Progress
of any queued or running ingestion is tracked by ``ingest_heartbeat_at``; the
sweep re-queues stale ones and fails those out of attempts.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from daneshyar.exceptions import PayloadTooLarge
from resources.chunking import Chunk, chunk_document
from resources.models import Resource, ResourceFile, ResourceStatus
from resources.parsing import ParseError, detect_content_type, parse_document
from workspaces.models import Workspace

logger = logging.getLogger(__name__)

# Passages embedded per call; the heartbeat is refreshed between calls.
EMBED_SLICE = 256
UNFINISHED = (ResourceStatus.PENDING, ResourceStatus.PROCESSING)


@dataclass(frozen=True)
class UploadOutcome:
    resource: Resource
    created: bool


def max_attempts() -> int:
    return int(settings.INGEST_MAX_RETRIES) + 1


def _enqueue_ingest(resource_id: uuid.UUID) -> None:
    """Queue the ingestion (called on commit, ``robust``: if the broker is
    down the upload still succeeds, and the sweep queues it later)."""
    from resources.tasks import ingest_resource

    ingest_resource.delay(str(resource_id))


def _enqueue_on_commit(resource_id: uuid.UUID) -> None:
    # A plain function, not a partial: Django names the callback when it logs
    # a failure of a robust one.
    def enqueue() -> None:
        _enqueue_ingest(resource_id)

    transaction.on_commit(enqueue, robust=True)


def resource_create(
    *,
    workspace: Workspace,
    data: bytes,
    title: str = "",
    filename: str = "",
    claimed_type: str = "",
) -> UploadOutcome:
    """Store an upload and queue its ingestion (after commit).

    Raises 413 over MAX_UPLOAD_BYTES and 415 for formats that are not
    accepted. The same bytes in the same workspace give the existing resource
    (``created=False``), also when two uploads race.
    """
    if len(data) > settings.MAX_UPLOAD_BYTES:
        raise PayloadTooLarge(
            f"The file is {len(data):,} bytes; the limit is {settings.MAX_UPLOAD_BYTES:,} bytes."
        )
    content_type = detect_content_type(data, filename=filename, claimed_type=claimed_type)
    sha256 = hashlib.sha256(data).hexdigest()
    existing = _same_content(workspace=workspace, sha256=sha256)
    if existing is not None:
        return UploadOutcome(resource=existing, created=False)
    now = timezone.now()
    try:
        with transaction.atomic():
            resource = Resource.objects.create(
                workspace=workspace,
                title=(title.strip() or filename or "Untitled")[:500],
                filename=filename[:500],
                content_type=content_type,
                size_bytes=len(data),
                sha256=sha256,
                status=ResourceStatus.PENDING,
                ingest_heartbeat_at=now,
            )
            ResourceFile.objects.create(resource=resource, data=data)
            _enqueue_on_commit(resource.id)
    except IntegrityError:
        # Another request stored the same bytes between our check and insert.
        existing = _same_content(workspace=workspace, sha256=sha256)
        if existing is None:
            raise
        return UploadOutcome(resource=existing, created=False)
    return UploadOutcome(resource=resource, created=True)


def _same_content(*, workspace: Workspace, sha256: str) -> Resource | None:
    return Resource.objects.filter(workspace=workspace, sha256=sha256).first()


def resource_create_from_text(*, workspace: Workspace, text: str, title: str = "") -> UploadOutcome:
    if not title.strip():
        first_line = text.strip().split("\n", 1)[0].strip()
        title = first_line[:120] or "Untitled"
    return resource_create(workspace=workspace, data=text.encode("utf-8"), title=title)


def resource_delete(*, resource: Resource) -> None:
    """Delete the resource; its passages leave retrieval in the same transaction."""
    from retrieval.models import Passage

    with transaction.atomic():
        Passage.objects.filter(resource_id=resource.pk).delete()
        Resource.objects.filter(pk=resource.pk).delete()


def resource_reingest(*, resource: Resource) -> Resource:
    """Queue a fresh ingestion. A ready resource stays ready (and searchable)
    until the new passages replace the old ones; a failed one goes back to
    pending."""
    now = timezone.now()
    with transaction.atomic():
        locked = Resource.objects.select_for_update().get(pk=resource.pk)
        if locked.status == ResourceStatus.FAILED:
            locked.status = ResourceStatus.PENDING
            locked.status_changed_at = now
            locked.error_code = ""
            locked.error_message = ""
        locked.attempts = 0
        locked.ingest_heartbeat_at = now
        locked.save()
        _enqueue_on_commit(locked.id)
    return locked


def resource_fail(*, resource_id: uuid.UUID, code: str, message: str) -> None:
    """End an ingestion as ``failed``; passages go, so retrieval never uses them."""
    from retrieval.models import Passage

    with transaction.atomic():
        resource = Resource.objects.select_for_update().filter(pk=resource_id).first()
        if resource is None:
            return
        Passage.objects.filter(resource_id=resource_id).delete()
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
    data = bytes(stored)
    try:
        chunks = resource_chunks(data=data, content_type=resource.content_type)
    except ParseError as exc:
        resource_fail(resource_id=resource_id, code=exc.code, message=exc.message)
        return ResourceStatus.FAILED
    vectors, model_name = embed_chunks(chunks=chunks, resource_id=resource_id)
    swapped = passages_replace(resource_id=resource_id, chunks=chunks, vectors=vectors, model_name=model_name)
    return ResourceStatus.READY if swapped else "skipped"


def resource_chunks(*, data: bytes, content_type: str) -> list[Chunk]:
    from retrieval.embeddings import get_embedder

    embedder = get_embedder()
    document = parse_document(data, content_type=content_type)
    # Passages longer than the model's window would be silently truncated.
    window = int(getattr(embedder, "max_seq_length", 0) or 0) - 2  # [CLS] and [SEP]
    size = min(settings.CHUNK_SIZE_TOKENS, window) if window > 0 else settings.CHUNK_SIZE_TOKENS
    chunks = chunk_document(
        document,
        tokenizer=getattr(embedder, "tokenizer", None),
        size=size,
        overlap=settings.CHUNK_OVERLAP_TOKENS,
    )
    if not chunks:
        raise ParseError("empty_document", "The document contains no extractable text.")
    return chunks


def embed_chunks(*, chunks: list[Chunk], resource_id: uuid.UUID | None) -> tuple[list[list[float]], str]:
    from retrieval.embeddings import get_embedder

    embedder = get_embedder()
    vectors: list[list[float]] = []
    for offset in range(0, len(chunks), EMBED_SLICE):
        vectors.extend(embedder.embed_documents([c.text for c in chunks[offset : offset + EMBED_SLICE]]))
        if resource_id is not None and offset + EMBED_SLICE < len(chunks):
            Resource.objects.filter(pk=resource_id, ingest_heartbeat_at__isnull=False).update(
                ingest_heartbeat_at=timezone.now()
            )
    return vectors, embedder.model_name


def passages_replace(
    *, resource_id: uuid.UUID, chunks: list[Chunk], vectors: list[list[float]], model_name: str
) -> bool:
    """Swap the resource's passages for new ones and mark it ready, atomically.

    Retrieval sees either the old passages or the new ones, never both nor
    a part. ``False`` if the resource was deleted meanwhile.
    """
    from retrieval.models import Passage

    with transaction.atomic():
        resource = Resource.objects.select_for_update().filter(pk=resource_id).first()
        if resource is None:
            return False
        Passage.objects.filter(resource_id=resource_id).delete()
        Passage.objects.bulk_create(
            [
                Passage(
                    workspace_id=resource.workspace_id,
                    resource_id=resource_id,
                    ordinal=chunk.ordinal,
                    text=chunk.text,
                    char_start=chunk.char_start,
                    char_end=chunk.char_end,
                    page=chunk.page,
                    token_count=chunk.token_count,
                    embedding=vector,
                    embedding_model=model_name,
                )
                for chunk, vector in zip(chunks, vectors, strict=True)
            ],
            batch_size=500,
        )
        now = timezone.now()
        if resource.status != ResourceStatus.READY:
            resource.status_changed_at = now
        resource.status = ResourceStatus.READY
        resource.error_code = ""
        resource.error_message = ""
        resource.passage_count = len(chunks)
        resource.ingest_heartbeat_at = None
        resource.save()
    return True


def resource_retry_allowed(*, resource_id: uuid.UUID) -> int | None:
    """The attempt count if another attempt is allowed, else ``None``."""
    attempts = Resource.objects.filter(pk=resource_id).values_list("attempts", flat=True).first()
    if attempts is None or attempts >= max_attempts():
        return None
    return int(attempts)


def resources_sweep_stale(*, stale_after: timedelta | None = None, limit: int = 500) -> int:
    """Re-queue ingestions whose heartbeat stopped (a crashed or restarted
    worker, a lost message); fail those out of attempts. Returns how many
    were touched."""
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
                _enqueue_on_commit(resource.id)
        if exhausted:
            resource_fail(
                resource_id=resource_id, code="worker_lost", message=_worker_lost_message(exhausted)
            )
    if touched:
        logger.info("sweep re-queued or failed %d stale ingestion(s)", touched)
    return touched
