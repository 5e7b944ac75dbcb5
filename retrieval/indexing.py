"""Writing a resource's passages: embed its chunks (and their answer units,
retrieval/unit_vectors.py), replace or delete its passages.

Retrieval owns the ``Passage`` table; this module is the only one that inserts
and deletes passages (the re-embedding's switch, retrieval/reembedding.py,
rewrites their vectors; the analysis fill, retrieval/passage_analysis.py, their
terms: docs/architecture.md, "Who writes which table"). Its one caller in
the ingestion pipeline is ``resources/ingestion/write.py`` (the one module of
``resources`` that calls retrieval, docs/architecture.md).

The caller owns the transaction that makes a swap atomic with its own
bookkeeping: :func:`passages_replace` must run inside the ``atomic()`` block
in which the caller marks the resource ready, so that retrieval sees either
the old passages or the new ones, never both nor a part.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F

from resources.chunking import Chunk
from resources.models import Resource
from resources.selectors import ingestion_waiting
from retrieval.embeddings import get_embedder
from retrieval.models import Passage, PassageUnits
from retrieval.passage_analysis import passages_analysis
from retrieval.unit_vectors import pack, unit_texts
from workspaces.models import Workspace

logger = logging.getLogger(__name__)

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


def workspace_language(*, workspace_id: uuid.UUID, sample: int = 500) -> str | None:
    """The language most of a workspace's passages are in (Passage.language,
    over up to ``sample`` of them); ``None`` for a workspace without any."""
    languages = (
        Passage.objects.filter(workspace_id=workspace_id)
        .exclude(language="und")
        .values_list("language", flat=True)[:sample]
    )
    counts = Counter(languages)
    return counts.most_common(1)[0][0] if counts else None


def chunks_embed(
    *, chunks: Sequence[Chunk], on_progress: Callable[[], None] | None = None, model: str | None = None
) -> EmbeddedChunks:
    """Embed ``chunks`` in slices by the model ``model`` (their workspace's,
    :func:`workspace_models`; by default the configured one); ``on_progress``
    runs between slices. (Their answer units are embedded later, by
    :func:`unit_vectors_fill`.)"""
    embedder = get_embedder(model)
    vectors: list[list[float]] = []
    for offset in range(0, len(chunks), EMBED_SLICE):
        vectors.extend(embedder.embed_passages([c.text for c in chunks[offset : offset + EMBED_SLICE]]))
        if on_progress is not None and offset + EMBED_SLICE < len(chunks):
            on_progress()
    return EmbeddedChunks(chunks=chunks, vectors=vectors, model_name=embedder.model_name)


def workspace_models(*, workspace_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, str]:
    """The embedding model each workspace is searched with, which its new
    passages are embedded by (``Workspace.embedding_model``)."""
    return dict(Workspace.objects.filter(id__in=list(workspace_ids)).values_list("id", "embedding_model"))


# FOR SHARE: a switch to a new model (retrieval/reembedding.py) takes the row
# FOR NO KEY UPDATE, so the two wait for each other, never for a chat turn.
_WORKSPACE_MODELS_LOCKED = (
    "SELECT id, embedding_model FROM workspaces_workspace WHERE id = ANY(%s::uuid[]) ORDER BY id FOR SHARE"
)


def _of_workspace_model(
    items: Sequence[tuple[Resource, EmbeddedChunks]],
) -> list[tuple[Resource, EmbeddedChunks]]:
    """``items``, each embedded by its workspace's model as it is now, under
    the workspaces' row locks: a workspace switched to a new model after its
    chunks were embedded by the old one (rare: they crossed) gets them
    embedded again, so no passage is left with a vector its searches skip."""
    with connection.cursor() as cursor:
        cursor.execute(_WORKSPACE_MODELS_LOCKED, [sorted({resource.workspace_id for resource, _ in items})])
        models = dict(cursor.fetchall())
    out = []
    for resource, embedded in items:
        model = models.get(resource.workspace_id, embedded.model_name)
        if model != embedded.model_name:
            logger.info(
                "workspace %s switched to %s meanwhile: embedding again", resource.workspace_id, model
            )
            embedded = chunks_embed(chunks=embedded.chunks, model=model)
        out.append((resource, embedded))
    return out


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
    items = _of_workspace_model(items)
    Passage.objects.filter(resource_id__in=[resource.pk for resource, _ in items]).delete()
    written = Passage.objects.bulk_create(
        [
            Passage(
                workspace_id=resource.workspace_id,
                resource_id=resource.pk,
                ordinal=chunk.ordinal,
                text=chunk.text,
                char_start=chunk.char_start,
                char_end=chunk.char_end,
                page=chunk.page,
                bbox=list(chunk.bbox) if chunk.bbox is not None else None,
                token_count=chunk.token_count,
                embedding=vector,
                embedding_model=embedded.model_name,
                **analysis,
            )
            for resource, embedded in items
            for chunk, vector, analysis in zip(
                embedded.chunks,
                embedded.vectors,
                passages_analysis([c.text for c in embedded.chunks]),
                strict=True,
            )
        ],
        batch_size=INSERT_BATCH,
    )
    # Their answer units' vectors are made later (unit_vectors_fill): queued empty.
    PassageUnits.objects.bulk_create([PassageUnits(passage=p) for p in written], batch_size=INSERT_BATCH)
    return {resource.pk: len(embedded.chunks) for resource, embedded in items}


def passages_delete(*, resource_id: uuid.UUID) -> None:
    """Take a resource's passages out of retrieval (a failed ingestion)."""
    Passage.objects.filter(resource_id=resource_id).delete()


def unit_vectors_queue_missing(*, workspace_id: uuid.UUID | None = None) -> int:
    """Queue the passages that have no row for their answer units' vectors
    (written outside ingestion, or by a previous version while the migration
    that added the table ran); how many. A scan of the passages: for the
    foreground command, not the periodic sweep."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO retrieval_passageunits (passage_id, vectors)"
            " SELECT p.id, ''::bytea FROM retrieval_passage p"
            " WHERE %(workspace)s::uuid IS NULL OR p.workspace_id = %(workspace)s::uuid"
            " ON CONFLICT (passage_id) DO NOTHING",
            {"workspace": workspace_id},
        )
        return int(cursor.rowcount)


def unit_vectors_fill(
    *,
    workspace_id: uuid.UUID | None = None,
    batch: int = 64,
    should_stop: Callable[[], bool] | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> int:
    """Make the answer units' vectors (retrieval/unit_vectors.py) of the
    passages queued without them (every passage ingestion writes), by their
    workspace's model (a passage of another model, stored as its workspace
    changes model, gets them with its new vector, retrieval/reembedding.py),
    ``batch`` passages a model call in id order; how many passages got them.
    ``should_stop`` is asked before each batch (the sweep yields to
    ingestion); ``on_batch`` gets the running count.

    Safe to interrupt, to repeat and to run beside another fill: a row is
    written only while it is still empty (a passage's text never changes: a
    re-ingested document's passages are new rows).
    """
    queued = PassageUnits.objects.filter(
        vectors=b"", passage__embedding_model=F("passage__workspace__embedding_model")
    )
    if workspace_id is not None:
        queued = queued.filter(passage__workspace_id=workspace_id)
    done = 0
    after: uuid.UUID | None = None
    while should_stop is None or not should_stop():
        page = queued.filter(passage_id__gt=after) if after is not None else queued
        rows = list(
            page.order_by("passage_id").values_list(
                "passage_id", "passage__text", "passage__embedding_model"
            )[:batch]
        )
        if not rows:
            break
        after = rows[-1][0]
        for model in dict.fromkeys(model for _, _, model in rows):
            done += _units_store([(pid, text) for pid, text, of in rows if of == model], model=model)
        if on_batch is not None:
            on_batch(done)
    return done


def _units_store(rows: Sequence[tuple[uuid.UUID, str]], *, model: str) -> int:
    """Embed and store the answer units of these passages (of the model ``model``)."""
    embedder = get_embedder(model)
    units = [unit_texts(text) for _, text in rows]
    distinct = list(dict.fromkeys(t for texts in units for t in texts))
    # Answer units are compared with a question: the passage side.
    vector = dict(zip(distinct, embedder.embed_passages(distinct), strict=True))
    done = 0
    for (passage_id, _), texts in zip(rows, units, strict=True):
        done += PassageUnits.objects.filter(passage_id=passage_id, vectors=b"").update(
            vectors=pack(texts, [vector[t] for t in texts])
        )
    return done


# Passages a sweep embeds between two looks at the ingestion queue (about
# half a second of the model on 2 cores): what a new upload may wait.
SWEEP_BATCH = 16
# Session advisory lock held by one sweep at a time.
_UNITS_LOCK = 0x756E697473  # an arbitrary fixed key ("units")


def unit_vectors_sweep(*, budget_seconds: float) -> int:
    """The worker's periodic fill (``retrieval.unit_vectors_sweep``): make
    the answer units' vectors of passages without them while no ingestion is
    waiting (checked before each batch: a new upload is never queued behind
    this), for at most ``budget_seconds``; one sweep at a time (an advisory
    lock: a second returns 0 at once). How many passages got them."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [_UNITS_LOCK])
        row = cursor.fetchone()
        if not (row and row[0]):
            return 0
        try:
            deadline = time.monotonic() + budget_seconds
            done = unit_vectors_fill(
                batch=SWEEP_BATCH, should_stop=lambda: time.monotonic() > deadline or ingestion_waiting()
            )
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [_UNITS_LOCK])
    if done:
        logger.info("made the unit vectors of %d passages", done)
    return done
