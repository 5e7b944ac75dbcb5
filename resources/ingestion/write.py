"""Embed and write: what an ingestion produced goes to the database.

Chunks are embedded (one model call for a whole batch, or one per resource
when that fails), then each resource ends in one of two written states:
``ready`` with its new passages swapped in atomically, or ``failed`` with its
passages gone, so retrieval never uses them.

This is the one module of ``resources`` that calls ``retrieval`` (to embed
and to write passages, through ``retrieval.indexing``): retrieval depends on
resources, and ingestion is the deliberate, single back-edge
(docs/architecture.md).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from celery.exceptions import SoftTimeLimitExceeded
from django.db import transaction
from django.utils import timezone

from daneshyar.exceptions import EmbeddingUnavailable
from daneshyar.transactions import atomic_retried
from resources.chunking import Chunk
from resources.events import resource_failed_emit, resources_ready_emit
from resources.models import OcrScan, Resource, ResourceStatus
from retrieval import indexing

logger = logging.getLogger(__name__)

EmbeddedChunks = indexing.EmbeddedChunks
ChunkingParams = indexing.ChunkingParams

# The fields a swap writes (bulk_update names them; it skips auto_now).
_READY_FIELDS = [
    "status",
    "status_changed_at",
    "error_code",
    "error_message",
    "passage_count",
    "ingest_heartbeat_at",
    "ingest_retry_at",
    "updated_at",
]


@dataclass(frozen=True)
class Prepared:
    """A resource parsed and chunked, ready to embed."""

    resource: Resource
    chunks: list[Chunk]


def chunking_params() -> ChunkingParams:
    """The embedding model's tokenizer and the chunk size that fits its window."""
    return indexing.chunking_params()


def workspace_language(workspace_id: uuid.UUID) -> str | None:
    """The language most of the workspace's passages are in (docs/ocr.md, "Which language")."""
    return indexing.workspace_language(workspace_id=workspace_id)


def embedder_preload() -> None:
    """Load the embedding model now (a worker at start), not in its first task."""
    indexing.chunking_params()


def chunks_embed_batch(
    prepared: Sequence[Prepared],
    *,
    on_progress: Callable[[], None],
    on_progress_of: Callable[[uuid.UUID], Callable[[], None]],
    on_error: Callable[[uuid.UUID, Exception], None],
) -> dict[uuid.UUID, EmbeddedChunks]:
    """One model call for every prepared resource of workspaces searched with
    one model (each resource embedded by its workspace's model: they differ
    while the embedding model changes, retrieval/reembedding.py); if it
    fails, one each.

    ``on_progress`` beats for the whole batch during the shared call;
    ``on_progress_of(id)`` gives the beat of one resource, called once before
    its own call too. A resource whose own call fails goes to ``on_error``
    at once (a retry, decided before the next resource's call) and is left
    out of the result."""
    models = indexing.workspace_models(workspace_ids={item.resource.workspace_id for item in prepared})
    groups: dict[str | None, list[Prepared]] = {}
    for item in prepared:
        groups.setdefault(models.get(item.resource.workspace_id), []).append(item)
    result: dict[uuid.UUID, EmbeddedChunks] = {}
    for model, group in groups.items():
        result.update(
            _embed_group(
                group, model, on_progress=on_progress, on_progress_of=on_progress_of, on_error=on_error
            )
        )
    return result


def _embed_group(
    prepared: Sequence[Prepared],
    model: str | None,
    *,
    on_progress: Callable[[], None],
    on_progress_of: Callable[[uuid.UUID], Callable[[], None]],
    on_error: Callable[[uuid.UUID, Exception], None],
) -> dict[uuid.UUID, EmbeddedChunks]:
    """:func:`chunks_embed_batch` for resources whose chunks one model embeds.
    An embedding server that is down (every try failed) fails each of them
    at once, none tried alone: each would wait out the same tries."""
    down: EmbeddingUnavailable | None = None
    if len(prepared) > 1:
        try:
            together = indexing.chunks_embed(
                chunks=[chunk for item in prepared for chunk in item.chunks],
                on_progress=on_progress,
                model=model,
            )
        except SoftTimeLimitExceeded:
            raise
        except Exception as exc:  # each one again alone below
            logger.warning("embedding a batch of %d resources failed; embedding each alone", len(prepared))
            down = _server_down(exc)
        else:
            return _split(prepared, together)
    result: dict[uuid.UUID, EmbeddedChunks] = {}
    for item in prepared:
        if down is not None:
            on_error(item.resource.pk, down)
            continue
        beat = on_progress_of(item.resource.pk)
        beat()
        try:
            result[item.resource.pk] = indexing.chunks_embed(
                chunks=item.chunks, on_progress=beat, model=model
            )
        except SoftTimeLimitExceeded:
            raise
        except Exception as exc:  # retried or failed per resource
            on_error(item.resource.pk, exc)
            down = _server_down(exc)
    return result


def _server_down(exc: Exception) -> EmbeddingUnavailable | None:
    """``exc`` if it says the embedding server is down (not a refusal of one request)."""
    return exc if isinstance(exc, EmbeddingUnavailable) and exc.server_down else None


def _split(prepared: Sequence[Prepared], together: EmbeddedChunks) -> dict[uuid.UUID, EmbeddedChunks]:
    """The vectors of one shared call, cut back into each resource's."""
    result: dict[uuid.UUID, EmbeddedChunks] = {}
    offset = 0
    for item in prepared:
        vectors = together.vectors[offset : offset + len(item.chunks)]
        result[item.resource.pk] = EmbeddedChunks(item.chunks, vectors, together.model_name)
        offset += len(item.chunks)
    return result


def _mark_ready(resource: Resource, *, passage_count: int, now: datetime) -> None:
    if resource.status != ResourceStatus.READY:
        resource.status_changed_at = now
    resource.status = ResourceStatus.READY
    resource.error_code = ""
    resource.error_message = ""
    resource.passage_count = passage_count
    resource.ingest_heartbeat_at = None
    resource.ingest_retry_at = None


def resource_passages_store(
    *, resource_id: uuid.UUID, embedded: EmbeddedChunks, read: Mapping[uuid.UUID, str] | None = None
) -> bool:
    """Swap the resource's passages for new ones and mark it ready, atomically.

    Retrieval sees either the old passages or the new ones, never both nor
    a part. ``False`` if the resource was deleted meanwhile, or if its bytes
    are no longer those the attempt read (``read``: the sha256 each resource
    had when it was claimed): an upload replaced them meanwhile
    (resources/external.py) and queued the attempt that reads the new ones.
    """

    def store() -> bool:
        resource = Resource.objects.select_for_update().filter(pk=resource_id).first()
        if resource is None or _replaced(resource, read):
            return False
        count = indexing.passages_replace(resource=resource, embedded=embedded)
        _mark_ready(resource, passage_count=count, now=timezone.now())
        resource.save()
        resources_ready_emit([resource])
        return True

    # Run again when it crossed another writer of the workspace's passages
    # (daneshyar/transactions.py): the embedding is done, the swap is cheap.
    return atomic_retried(store)


def resources_passages_store(
    *, embedded: dict[uuid.UUID, EmbeddedChunks], read: Mapping[uuid.UUID, str] | None = None
) -> dict[uuid.UUID, bool]:
    """:func:`resource_passages_store` for many resources in one transaction:
    each swap is atomic (the transaction holds them all), and retrieval sees
    all of a resource's old passages or all of its new ones. ``False`` for a
    resource deleted or replaced meanwhile."""

    def store() -> list[Resource]:
        # In id order, as every claim locks, so that batches cannot deadlock on
        # them; the lexeme counts' rows they may still cross on (module doc of
        # daneshyar/transactions.py): then the swap is run again.
        locked = Resource.objects.select_for_update().filter(pk__in=list(embedded)).order_by("pk")
        resources = [resource for resource in locked if not _replaced(resource, read)]
        counts = indexing.passages_replace_many(items=[(r, embedded[r.pk]) for r in resources])
        now = timezone.now()
        for resource in resources:
            _mark_ready(resource, passage_count=counts[resource.pk], now=now)
            resource.updated_at = now  # bulk_update skips auto_now
        Resource.objects.bulk_update(resources, _READY_FIELDS)
        resources_ready_emit(resources)
        return resources

    found = {r.pk for r in atomic_retried(store)}
    return {resource_id: resource_id in found for resource_id in embedded}


def _replaced(resource: Resource, read: Mapping[uuid.UUID, str] | None) -> bool:
    """Whether the resource's bytes changed since the attempt read them."""
    return read is not None and resource.pk in read and read[resource.pk] != resource.sha256


def resource_fail(*, resource_id: uuid.UUID, code: str, message: str) -> None:
    """End an ingestion as ``failed``; passages go, so retrieval never uses them."""
    with transaction.atomic():
        resource = Resource.objects.select_for_update().filter(pk=resource_id).first()
        if resource is None:
            return
        indexing.passages_delete(resource_id=resource_id)
        OcrScan.objects.filter(resource_id=resource_id).delete()  # its kept pages (docs/ocr.md)
        resource.status = ResourceStatus.FAILED
        resource.status_changed_at = timezone.now()
        resource.error_code = code[:64]
        resource.error_message = message
        resource.passage_count = 0
        resource.ingest_heartbeat_at = None
        resource.ingest_retry_at = None
        resource.save()
        resource_failed_emit(resource)
    logger.warning("ingestion of resource %s failed: %s: %s", resource_id, code, message)
