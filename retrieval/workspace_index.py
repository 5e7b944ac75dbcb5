"""An HNSW index of its own for each large workspace.

pgvector filters ``WHERE workspace_id = …`` *after* walking the graph: in a
shared index of 1,000,000 passages, a 300,000-passage workspace's nearest
neighbours came back with recall@10 0.70 against exact search
(docs/retrieval.md, "One million passages"), because the walk spends its
candidate list on other workspaces' rows. A partial index

    CREATE INDEX CONCURRENTLY passage_hnsw_ws_<id> ON retrieval_passage
    USING hnsw (embedding vector_cosine_ops) WHERE workspace_id = '<id>'

holds only that workspace's rows, so its recall is that of an unfiltered
graph of the workspace's size. The planner picks it by itself: the dense
leg's query names the workspace as a literal (client-side binding), which
proves the index's predicate, and the smaller index is the cheaper one.

Which workspaces: those past :data:`OWN_INDEX_MIN_PASSAGES` passages, the
same limit above which the dense leg stops searching exactly
(``dense.EXACT_MAX_PASSAGES``): below it the exact search is exact and
cheap, above it every workspace is searched through a graph of its own once
the task has built it, and through the shared index (iterative scan) until
then. :func:`sweep` runs in the worker (``retrieval.workspace_indexes_sweep``,
every ``WORKSPACE_INDEX_SWEEP_SECONDS``): it builds the missing indexes one
after the other without blocking writes (``CONCURRENTLY``), and drops those
of workspaces deleted or shrunk to half the limit.

The alternative, a partition per large tenant, was not taken: a
partitioned ``retrieval_passage`` needs the workspace in its primary key
and every unique constraint, a tenant crossing the limit must have its rows
moved (detach, copy, attach), and the per-statement lexeme triggers would
need re-checking on partitions; a partial index needs none of that, builds
without locking writers out, and is dropped as easily.
"""

from __future__ import annotations

import logging
import uuid

from django.db import DEFAULT_DB_ALIAS, connections

logger = logging.getLogger(__name__)

# Workspaces with more passages than this get an index of their own.
OWN_INDEX_MIN_PASSAGES = 10_000
# Same graph parameters as the shared index (migration 0001).
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 64


def index_name(workspace_id: uuid.UUID) -> str:
    return f"passage_hnsw_ws_{workspace_id.hex}"  # 48 characters, within PostgreSQL's 63


def has_own_index(workspace_id: uuid.UUID, *, using: str = DEFAULT_DB_ALIAS) -> bool:
    """Whether the workspace's index exists and is valid (a failed concurrent build leaves an invalid one)."""
    with connections[using].cursor() as cursor:
        cursor.execute(
            "SELECT i.indisvalid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid"
            " WHERE c.relname = %s",
            [index_name(workspace_id)],
        )
        row = cursor.fetchone()
    return bool(row and row[0])


def own_indexes(*, using: str = DEFAULT_DB_ALIAS) -> dict[uuid.UUID, bool]:
    """Every workspace index on the table: ``{workspace id: valid}``."""
    with connections[using].cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid"
            " WHERE i.indrelid = 'retrieval_passage'::regclass AND c.relname LIKE 'passage\\_hnsw\\_ws\\_%%'"
        )
        return {
            uuid.UUID(name.removeprefix("passage_hnsw_ws_")): bool(valid) for name, valid in cursor.fetchall()
        }


def passage_count(workspace_id: uuid.UUID, *, using: str = DEFAULT_DB_ALIAS) -> int:
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT count(*) FROM retrieval_passage WHERE workspace_id = %s", [workspace_id])
        row = cursor.fetchone()
    return int(row[0]) if row else 0


# Session advisory lock held by one build at a time (any workspace).
_BUILD_LOCK = 0x64616E6568  # an arbitrary fixed key ("daneh")


def build(workspace_id: uuid.UUID, *, using: str = DEFAULT_DB_ALIAS, force: bool = False) -> bool:
    """Build the workspace's own index if it is past the limit and has none; True if built.

    ``CREATE INDEX CONCURRENTLY``: ingestion and search go on meanwhile. One
    build runs at a time (an advisory lock; a second caller returns False at
    once), so an invalid index found under the lock was left by an
    interrupted build: it is dropped and built again. Outside a transaction.
    """
    if not force and passage_count(workspace_id, using=using) <= OWN_INDEX_MIN_PASSAGES:
        return False
    name = index_name(workspace_id)
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [_BUILD_LOCK])
        row = cursor.fetchone()
        if not (row and row[0]):
            return False
        try:
            existing = own_indexes(using=using).get(workspace_id)
            if existing:
                return False
            if existing is False:
                cursor.execute(f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"')
            # The name and the literal come from a UUID: nothing to quote.
            cursor.execute(
                f'CREATE INDEX CONCURRENTLY "{name}" ON retrieval_passage'
                " USING hnsw (embedding vector_cosine_ops)"
                f" WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})"
                f" WHERE workspace_id = '{workspace_id}'::uuid"
            )
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [_BUILD_LOCK])
    logger.info("built %s", name)
    return True


_LARGE_WORKSPACES = """
SELECT workspace_id FROM resources_resource
WHERE status = 'ready'
GROUP BY workspace_id HAVING sum(passage_count) > %s
ORDER BY sum(passage_count) DESC
"""


def sweep(*, using: str = DEFAULT_DB_ALIAS) -> dict[str, list[str]]:
    """Build the index of every workspace past the limit that has none; drop the
    indexes of workspaces deleted or now under half the limit (so a workspace
    near the limit does not flap). Ready passages, from the resources' counts."""
    with connections[using].cursor() as cursor:
        cursor.execute(_LARGE_WORKSPACES, [OWN_INDEX_MIN_PASSAGES])
        large = [row[0] for row in cursor.fetchall()]
        cursor.execute(_LARGE_WORKSPACES, [OWN_INDEX_MIN_PASSAGES // 2])
        keep = {row[0] for row in cursor.fetchall()}
    existing = own_indexes(using=using)
    built = [str(w) for w in large if not existing.get(w) and build(w, using=using, force=True)]
    dropped = []
    for workspace_id in existing:
        if workspace_id not in keep:
            drop(workspace_id, using=using)
            dropped.append(str(workspace_id))
    return {"built": built, "dropped": dropped}


def drop(workspace_id: uuid.UUID, *, using: str = DEFAULT_DB_ALIAS) -> None:
    """Drop the workspace's own index (its workspace is gone, or it shrank)."""
    with connections[using].cursor() as cursor:
        cursor.execute(f'DROP INDEX CONCURRENTLY IF EXISTS "{index_name(workspace_id)}"')
