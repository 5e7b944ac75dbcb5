"""Workspace statistics the search legs plan with, cached per process.

``passages`` (ready passages) chooses exact or index search for the dense
leg and is BM25's ``N``; ``average_length`` is BM25's ``avgdl``. Both change
slowly: a value up to :data:`STATS_TTL_SECONDS` old only shifts BM25 weights
a little or sends a fast-growing workspace to exact search a while longer,
which is slower but still exact.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass

from django.db.backends.utils import CursorWrapper
from psycopg import sql

from retrieval.models import Passage
from retrieval.search import statements

STATS_TTL_SECONDS = 60.0

# Ready passages; and the average passage length from the trigger-kept
# counts (the sum of all document frequencies is the sum of all passage
# lengths), which spares reading every tsvector of a large workspace.
_STATS = sql.SQL("""
SELECT
    (SELECT count(*) FROM {passages_with_resources}
     WHERE p.workspace_id = %(workspace)s AND r.status = {ready}),
    (SELECT coalesce(sum(passages), 0) FROM {workspace_lexeme} WHERE workspace_id = %(workspace)s)
    / greatest((SELECT count(*) FROM {passage} WHERE workspace_id = %(workspace)s), 1)::float8,
    (SELECT reltuples FROM pg_class WHERE oid = {passage_name}::regclass)
""").format(
    passages_with_resources=statements.PASSAGES_WITH_RESOURCES,
    ready=statements.READY,
    workspace_lexeme=statements.WORKSPACE_LEXEME,
    passage=statements.PASSAGE,
    passage_name=sql.Literal(Passage._meta.db_table),
)


@dataclass(frozen=True)
class WorkspaceStats:
    passages: int
    average_length: float
    # Passages of all workspaces, PostgreSQL's estimate (its statistics; at
    # least ``passages``): the workspace's share of the table plans the lexical match.
    table_passages: int = 0


_stats_cache: dict[uuid.UUID, tuple[float, WorkspaceStats]] = {}
_stats_lock = threading.Lock()


def workspace_stats(cursor: CursorWrapper, *, workspace_id: uuid.UUID) -> WorkspaceStats:
    now = time.monotonic()
    with _stats_lock:
        cached = _stats_cache.get(workspace_id)
    if cached is not None and now - cached[0] < STATS_TTL_SECONDS:
        return cached[1]
    cursor.execute(_STATS, {"workspace": workspace_id})
    row = cursor.fetchone() or (0, 0.0, 0.0)
    stats = WorkspaceStats(
        passages=int(row[0]), average_length=float(row[1]), table_passages=max(int(row[2] or 0), int(row[0]))
    )
    if stats.passages:  # an empty workspace is likely filling up: ask again next time
        with _stats_lock:
            _stats_cache[workspace_id] = (now, stats)
    return stats


def clear_stats_cache() -> None:
    with _stats_lock:
        _stats_cache.clear()
