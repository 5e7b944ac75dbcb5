"""A change of the embedding model, carried out workspace by workspace
without downtime (docs/configuration.md, "Changing the embedding model").

Vectors of two models are never compared, so a workspace is searched with
one model at a time: ``Workspace.embedding_model``, the model its passages'
vectors are of (a search embeds the query with it, and every leg keeps to
its passages, retrieval/search/statements.py). When EMBEDDING_MODEL_NAME
changes, every workspace on another model is re-embedded in the background:

1. :func:`reembed_fill` embeds, by the configured model, the workspace's
   passages that have no new vector yet, a batch at a time in id order, and
   stores each passage's vector and its answer units' vectors beside it
   (``PassageReembedding``), one short transaction a batch. Search goes on
   with the old vectors meanwhile. A killed worker loses at most the batch
   it was embedding: the next run starts from the passages still without a
   row, and a row is only ever inserted (``ON CONFLICT DO NOTHING``), so two
   runs side by side never write a passage twice.
2. :func:`reembed_switch`, once every passage has its new vector, copies
   them into the passages and their units, sets the workspace's model and
   deletes the rows, in one transaction: a search sees the old vectors with
   the old model or the new with the new, never a mix.

Ingestion goes on meanwhile: it embeds with the workspace's model (the old
one until the switch) and the fill picks its passages up before the switch.
An ingestion that embedded before a switch and writes after it is caught
under the workspace's row lock (``retrieval.indexing.passages_replace_many``
takes it ``FOR SHARE``, the switch ``FOR NO KEY UPDATE``) and embeds again.

The worker's beat runs :func:`reembed_sweep` every ``REEMBED_SWEEP_SECONDS``
(one workspace at a time, the one with the fewest passages left first, a
batch at a time while no ingestion waits); ``manage.py reembed`` does the
same in the foreground and ``manage.py reembed --status`` prints where each
workspace stands, as the console's ingestion page does.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from psycopg import sql

from resources.selectors import ingestion_waiting
from retrieval.embeddings import get_embedder
from retrieval.models import Passage
from retrieval.tables import PASSAGE, PASSAGE_REEMBEDDING, PASSAGE_UNITS, WORKSPACE
from retrieval.unit_vectors import pack, unit_texts
from workspaces.models import Workspace
from workspaces.services import workspace_embedding_model_lock, workspace_embedding_model_set

logger = logging.getLogger(__name__)

# Passages a sweep embeds between two looks at the ingestion queue (as the
# unit vectors' sweep: about half a second of the model on 2 cores).
SWEEP_BATCH = 16
# Session advisory lock held by one re-embedding at a time (sweep or command).
_REEMBED_LOCK = 0x7265656D62  # an arbitrary fixed key ("reemb")


def _composed(statement: str) -> str:
    """A statement with its tables named by their models (retrieval/tables.py),
    rendered once, at import."""
    tables = {"passage": PASSAGE, "reembedding": PASSAGE_REEMBEDDING, "units": PASSAGE_UNITS}
    return sql.SQL(statement).format(**tables, workspace=WORKSPACE).as_string()


def target_model() -> str:
    """The model every workspace is re-embedded by: the configured one."""
    return str(settings.EMBEDDING_MODEL_NAME)


@dataclass(frozen=True)
class Progress:
    """Where a workspace's re-embedding stands."""

    workspace_id: uuid.UUID
    model: str  # what it is searched with now
    target: str  # what it is re-embedded by
    done: int  # passages with their target vector
    total: int  # passages

    @property
    def switching(self) -> bool:
        """Whether the workspace is still searched with another model."""
        return self.model != self.target


_PROGRESS = _composed("""
SELECT count(*),
       count(*) FILTER (WHERE p.embedding_model = %(target)s OR n.passage_id IS NOT NULL)
FROM {passage} p
LEFT JOIN {reembedding} n ON n.passage_id = p.id AND n.model = %(target)s
WHERE p.workspace_id = %(workspace)s
""")


def reembed_progress(*, workspace: Workspace) -> Progress:
    """The workspace's passages and how many have the configured model's vector
    (all of them, without counting, when it is searched with that model)."""
    target = target_model()
    if workspace.embedding_model == target:
        total = Passage.objects.filter(workspace_id=workspace.id).count()
        return Progress(workspace.id, target, target, total, total)
    with connection.cursor() as cursor:
        cursor.execute(_PROGRESS, {"target": target, "workspace": workspace.id})
        row = cursor.fetchone()
    total, done = (int(row[0]), int(row[1])) if row else (0, 0)
    return Progress(workspace.id, workspace.embedding_model, target, done, total)


_PENDING = _composed("""
SELECT w.id FROM {workspace} w
WHERE w.embedding_model <> %(target)s AND (%(workspace)s::uuid IS NULL OR w.id = %(workspace)s::uuid)
ORDER BY (SELECT count(*) FROM {passage} p WHERE p.workspace_id = w.id
          AND p.embedding_model <> %(target)s
          AND NOT EXISTS (SELECT 1 FROM {reembedding} n
                          WHERE n.passage_id = p.id AND n.model = %(target)s)),
         w.id
""")


def reembed_pending(*, workspace_id: uuid.UUID | None = None) -> list[uuid.UUID]:
    """The workspaces searched with another model than the configured one,
    those with the fewest passages left first (so that most switch soon; the
    list only shrinks, since a new workspace takes the configured model)."""
    with connection.cursor() as cursor:
        cursor.execute(_PENDING, {"target": target_model(), "workspace": workspace_id})
        return [row[0] for row in cursor.fetchall()]


_STALE = _composed("""
DELETE FROM {reembedding} n USING {passage} p
WHERE p.id = n.passage_id AND p.workspace_id = %(workspace)s AND n.model <> %(target)s
""")
_WANTING = _composed("""
SELECT p.id, p.text FROM {passage} p
WHERE p.workspace_id = %(workspace)s AND p.embedding_model <> %(target)s
  AND NOT EXISTS (SELECT 1 FROM {reembedding} n WHERE n.passage_id = p.id)
  AND (%(after)s::uuid IS NULL OR p.id > %(after)s::uuid)
ORDER BY p.id
LIMIT %(limit)s
""")
# Only passages that still exist and that no one is deleting or re-writing
# (SKIP LOCKED: a row an ingestion is replacing is left for the next run,
# instead of the two transactions waiting on each other).
_STORE = _composed("""
WITH kept AS (
    SELECT p.id FROM {passage} p WHERE p.id = ANY(%(ids)s::uuid[]) FOR KEY SHARE SKIP LOCKED
)
INSERT INTO {reembedding} (passage_id, model, embedding, units)
SELECT v.id, %(target)s, v.embedding::vector, v.units
FROM unnest(%(ids)s::uuid[], %(vectors)s::text[], %(units)s::bytea[]) AS v(id, embedding, units)
JOIN kept ON kept.id = v.id
ON CONFLICT (passage_id) DO NOTHING
""")


def reembed_fill(
    *,
    workspace_id: uuid.UUID,
    batch: int = SWEEP_BATCH,
    should_stop: Callable[[], bool] | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> int:
    """Embed, by the configured model, the workspace's passages that have no
    new vector yet, ``batch`` passages a model call in id order (module doc,
    step 1); how many were stored. ``should_stop`` is asked before each
    batch (the sweep yields to ingestion); ``on_batch`` gets the running count.
    Rows another model made (the setting changed again meanwhile) go first."""
    target = target_model()
    embedder = get_embedder()
    params: dict[str, Any] = {"workspace": workspace_id, "target": target, "after": None, "limit": batch}
    with connection.cursor() as cursor:
        cursor.execute(_STALE, params)
    done = 0
    while should_stop is None or not should_stop():
        with connection.cursor() as cursor:
            cursor.execute(_WANTING, params)
            rows = cursor.fetchall()
        if not rows:
            break
        params["after"] = rows[-1][0]
        texts = [text for _, text in rows]
        vectors = embedder.embed_passages(texts)
        units = [unit_texts(text) for text in texts]
        distinct = list(dict.fromkeys(t for each in units for t in each))
        unit_vector = dict(zip(distinct, embedder.embed_passages(distinct), strict=True))
        done += _store(
            ids=[passage_id for passage_id, _ in rows],
            vectors=vectors,
            units=[pack(each, [unit_vector[t] for t in each]) for each in units],
            target=target,
        )
        if on_batch is not None:
            on_batch(done)
    return done


def _store(*, ids: list[uuid.UUID], vectors: list[list[float]], units: list[bytes], target: str) -> int:
    literals = ["[" + ",".join(repr(float(x)) for x in vector) + "]" for vector in vectors]
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_STORE, {"ids": ids, "vectors": literals, "units": units, "target": target})
            return int(cursor.rowcount)
    except DatabaseError:  # a passage deleted meanwhile: the next run takes the rest
        logger.warning("re-embedding: a batch of %d passages was not stored", len(ids), exc_info=True)
        return 0


_MISSING = _composed("""
SELECT EXISTS (
    SELECT 1 FROM {passage} p
    WHERE p.workspace_id = %(workspace)s AND p.embedding_model <> %(target)s
      AND NOT EXISTS (SELECT 1 FROM {reembedding} n
                      WHERE n.passage_id = p.id AND n.model = %(target)s)
)
""")
_SWITCH = [
    _composed("""UPDATE {passage} p SET embedding = n.embedding, embedding_model = n.model
       FROM {reembedding} n
       WHERE n.passage_id = p.id AND n.model = %(target)s
         AND p.workspace_id = %(workspace)s AND p.embedding_model <> %(target)s"""),
    _composed("""INSERT INTO {units} (passage_id, vectors)
       SELECT n.passage_id, n.units FROM {reembedding} n
       JOIN {passage} p ON p.id = n.passage_id
       WHERE p.workspace_id = %(workspace)s AND n.model = %(target)s
       ON CONFLICT (passage_id) DO UPDATE SET vectors = EXCLUDED.vectors"""),
    _composed("""DELETE FROM {reembedding} n USING {passage} p
       WHERE p.id = n.passage_id AND p.workspace_id = %(workspace)s"""),
]
_DELETE_OTHER_MODELS = _composed("DELETE FROM {reembedding} WHERE model <> %s")


def reembed_switch(*, workspace_id: uuid.UUID) -> bool:
    """Switch the workspace to the configured model if every passage has its
    vector (module doc, step 2); whether it is on the configured model now.

    The workspace's row is locked first (``FOR NO KEY UPDATE``, by the
    workspaces app, whose row it is: ingestion's ``FOR SHARE`` waits, a chat
    turn's foreign-key checks do not), then the check is made under the
    lock, so a passage written just before is seen; the workspaces app sets
    the model in the same transaction.
    """
    target = target_model()
    params: dict[str, Any] = {"workspace": workspace_id, "target": target}
    with transaction.atomic(), connection.cursor() as cursor:
        model = workspace_embedding_model_lock(workspace_id=workspace_id)
        if model is None:  # deleted
            return False
        if model == target:
            return True
        cursor.execute(_MISSING, params)
        missing = cursor.fetchone()
        if missing and missing[0]:
            return False
        for statement in _SWITCH:
            cursor.execute(statement, params)
        workspace_embedding_model_set(workspace_id=workspace_id, model=target)
    logger.info("workspace %s now searched with %s (was %s)", workspace_id, target, model)
    return True


def reembed_workspace(
    *, workspace_id: uuid.UUID, batch: int, should_stop: Callable[[], bool], on_batch: Callable[[int], None]
) -> bool:
    """Fill and switch one workspace until it is switched, ``should_stop``, or
    a round stores nothing and still cannot switch (a passage being replaced
    all along: the next run takes it); whether it was switched. Passages
    that ingestion wrote meanwhile are taken by the next round."""
    while True:
        stored = reembed_fill(
            workspace_id=workspace_id, batch=batch, should_stop=should_stop, on_batch=on_batch
        )
        if reembed_switch(workspace_id=workspace_id):
            return True
        if should_stop() or not stored:
            return False


def reembed_run(
    *,
    workspace_id: uuid.UUID | None = None,
    batch: int = SWEEP_BATCH,
    should_stop: Callable[[], bool] = lambda: False,
    on_batch: Callable[[uuid.UUID, int], None] | None = None,
    wait: bool = False,
) -> list[uuid.UUID] | None:
    """Re-embed the pending workspaces (or the one given), one at a time,
    until none is left or ``should_stop``; the workspaces switched. One run at
    a time (an advisory lock): ``None`` at once if another holds it, unless
    ``wait``. Stale rows (of a model no longer configured) are deleted first."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_lock(%s)" if wait else "SELECT pg_try_advisory_lock(%s)", [_REEMBED_LOCK]
        )
        row = cursor.fetchone()
        if not wait and not (row and row[0]):
            return None
        try:
            cursor.execute(_DELETE_OTHER_MODELS, [target_model()])
            switched: list[uuid.UUID] = []
            for pending in reembed_pending(workspace_id=workspace_id):
                if should_stop():
                    break

                def beat(done: int, pending: uuid.UUID = pending) -> None:
                    if on_batch is not None:
                        on_batch(pending, done)

                if reembed_workspace(
                    workspace_id=pending, batch=batch, should_stop=should_stop, on_batch=beat
                ):
                    switched.append(pending)
                else:
                    break
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [_REEMBED_LOCK])
    return switched


def reembed_sweep(*, budget_seconds: float) -> list[str]:
    """The worker's periodic run (``retrieval.reembed_sweep``): re-embed
    while no ingestion is waiting (checked before each batch), for at most
    ``budget_seconds``; the workspaces switched."""
    deadline = time.monotonic() + budget_seconds
    switched = reembed_run(should_stop=lambda: time.monotonic() > deadline or ingestion_waiting())
    return [str(w) for w in switched or []]
