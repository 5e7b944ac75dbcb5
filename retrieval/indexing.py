"""Writing a resource's passages: embed its chunks, replace or delete its passages.

Retrieval owns the ``Passage`` table; this module is the only way passages are
written. Its one caller in the ingestion pipeline is ``resources/ingestion/write.py``
(the one module of ``resources`` that calls retrieval, docs/architecture.md).

The caller owns the transaction that makes a swap atomic with its own
bookkeeping: :func:`passages_replace` must run inside the ``atomic()`` block
in which the caller marks the resource ready, so that retrieval sees either
the old passages or the new ones, never both nor a part.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from resources.chunking import Chunk
from resources.models import Resource
from retrieval.embeddings import get_embedder
from retrieval.models import Passage

# Passages embedded per model call; ``on_progress`` runs between calls (the
# ingestion's heartbeat).
EMBED_SLICE = 256
INSERT_BATCH = 500


@dataclass(frozen=True)
class ChunkingParams:
    """What chunking needs to know of the embedding model."""

    tokenizer: Any
    size: int


@dataclass(frozen=True)
class EmbeddedChunks:
    chunks: Sequence[Chunk]
    vectors: list[list[float]]
    model_name: str


def chunking_params() -> ChunkingParams:
    """The embedder's tokenizer, and a chunk size that fits its window.

    A passage longer than the model's window would be silently truncated when
    embedded, so CHUNK_SIZE_TOKENS is capped by it.
    """
    embedder = get_embedder()
    window = int(getattr(embedder, "max_seq_length", 0) or 0) - 2  # [CLS] and [SEP]
    size = min(settings.CHUNK_SIZE_TOKENS, window) if window > 0 else settings.CHUNK_SIZE_TOKENS
    return ChunkingParams(tokenizer=getattr(embedder, "tokenizer", None), size=size)


def chunks_embed(*, chunks: Sequence[Chunk], on_progress: Callable[[], None] | None = None) -> EmbeddedChunks:
    """Embed ``chunks`` in slices; ``on_progress`` runs between slices."""
    embedder = get_embedder()
    vectors: list[list[float]] = []
    for offset in range(0, len(chunks), EMBED_SLICE):
        vectors.extend(embedder.embed_documents([c.text for c in chunks[offset : offset + EMBED_SLICE]]))
        if on_progress is not None and offset + EMBED_SLICE < len(chunks):
            on_progress()
    return EmbeddedChunks(chunks=chunks, vectors=vectors, model_name=embedder.model_name)


def passages_replace(*, resource: Resource, embedded: EmbeddedChunks) -> int:
    """Replace the resource's passages with ``embedded``; how many were written.

    Call it inside the caller's transaction, with the resource row locked.
    """
    return passages_replace_many(items=[(resource, embedded)])[resource.pk]


def passages_replace_many(*, items: Sequence[tuple[Resource, EmbeddedChunks]]) -> dict[uuid.UUID, int]:
    """Replace the passages of several resources: one DELETE, then multi-row
    INSERTs of up to INSERT_BATCH rows (so the statement-level lexeme
    triggers run once per statement, not once per resource). How many
    passages each resource now has.

    Call it inside the caller's transaction, with the resource rows locked.
    """
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("passages_replace must run inside the caller's transaction")
    if not items:
        return {}
    Passage.objects.filter(resource_id__in=[resource.pk for resource, _ in items]).delete()
    Passage.objects.bulk_create(
        [
            Passage(
                workspace_id=resource.workspace_id,
                resource_id=resource.pk,
                ordinal=chunk.ordinal,
                text=chunk.text,
                char_start=chunk.char_start,
                char_end=chunk.char_end,
                page=chunk.page,
                token_count=chunk.token_count,
                embedding=vector,
                embedding_model=embedded.model_name,
            )
            for resource, embedded in items
            for chunk, vector in zip(embedded.chunks, embedded.vectors, strict=True)
        ],
        batch_size=INSERT_BATCH,
    )
    return {resource.pk: len(embedded.chunks) for resource, embedded in items}


def passages_delete(*, resource_id: uuid.UUID) -> None:
    """Take a resource's passages out of retrieval (a failed ingestion)."""
    Passage.objects.filter(resource_id=resource_id).delete()
