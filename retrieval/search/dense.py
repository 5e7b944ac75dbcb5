"""The dense leg: cosine nearest neighbours among a workspace's ready passages.

pgvector applies the ``WHERE`` clause *after* the HNSW scan: with the default
``ef_search`` of 40, a workspace holding 1% of the index's rows gets about
0.4 rows back instead of k. Two strategies keep results complete:

- a workspace with at most :data:`EXACT_MAX_PASSAGES` ready passages
  (:mod:`retrieval.search.stats`) is searched exactly (its rows through the
  ``(workspace, resource)`` index, every distance computed): cheap at that
  size, and exact;
- a larger one is searched through an HNSW index: its own once the periodic
  task has built it (:mod:`retrieval.workspace_index`; the planner picks the
  partial index by itself, no filtering is left to lose rows), the shared
  one until then, with iterative scans (pgvector >= 0.8): the scan goes on
  past ``ef_search`` until ``limit`` rows pass the filter. A workspace this
  large holds enough of the index that the scan stops well within
  ``hnsw.max_scan_tuples``.

bench/retrieval_latency measures both (recall@10 against exact search).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from django.db.backends.utils import CursorWrapper

from resources.models import ResourceStatus

# Up to this many passages a workspace is searched exactly (bench/retrieval_latency).
EXACT_MAX_PASSAGES = 10_000
# HNSW candidate list per scan step; iterative scans continue past it. 200:
# recall@10 0.977 against exact search for a 300,000-passage workspace on its
# own index (100: 0.935), hybrid p95 70 ms (bench/retrieval_latency, 1,000,000).
HNSW_EF_SEARCH = 200
# Stop an iterative scan after visiting this many index tuples (pgvector's
# default is 20,000). Only a workspace that is a tiny share of a huge index
# could reach it, and such a workspace is small enough for exact search.
HNSW_MAX_SCAN_TUPLES = 50_000

READY = ResourceStatus.READY.value

# Similarity is 1 - cosine distance, i.e. the cosine similarity in [-1, 1].
_NEAREST_INDEXED = """
SELECT p.id, 1 - (p.embedding <=> %(vector)s::vector) AS similarity
FROM retrieval_passage p
JOIN resources_resource r ON r.id = p.resource_id
WHERE p.workspace_id = %(workspace)s AND r.status = %(ready)s
ORDER BY p.embedding <=> %(vector)s::vector
LIMIT %(limit)s
"""

# "+ 0" keeps the planner off the HNSW index: order by the exact distance.
_NEAREST_EXACT = """
SELECT p.id, 1 - (p.embedding <=> %(vector)s::vector) AS similarity
FROM retrieval_passage p
JOIN resources_resource r ON r.id = p.resource_id
WHERE p.workspace_id = %(workspace)s AND r.status = %(ready)s
ORDER BY (p.embedding <=> %(vector)s::vector) + 0
LIMIT %(limit)s
"""

_PER_RESOURCE = """
SELECT id, similarity FROM (
    SELECT p.id, s.similarity,
           row_number() OVER (PARTITION BY p.resource_id ORDER BY s.similarity DESC, p.id) AS place
    FROM retrieval_passage p
    JOIN resources_resource r ON r.id = p.resource_id
    CROSS JOIN LATERAL (SELECT 1 - (p.embedding <=> %(vector)s::vector) AS similarity) s
    WHERE p.workspace_id = %(workspace)s AND r.status = %(ready)s
      AND p.resource_id = ANY(%(resources)s::uuid[])
) ranked
WHERE place <= %(per_resource)s
"""


def vector_literal(vector: Sequence[float]) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def nearest(
    cursor: CursorWrapper, *, workspace_id: uuid.UUID, vector: str, limit: int, exact: bool
) -> dict[uuid.UUID, float]:
    """The ``limit`` most similar ready passages: ``{passage_id: cosine similarity}``.

    Must run inside a transaction: the HNSW settings are ``SET LOCAL``.
    """
    params: dict[str, Any] = {"vector": vector, "workspace": workspace_id, "ready": READY, "limit": limit}
    if exact:
        cursor.execute(_NEAREST_EXACT, params)
    else:
        index_scan_settings(cursor, limit=limit)
        cursor.execute(_NEAREST_INDEXED, params)
    # relaxed_order may return rows slightly out of order; callers sort.
    return {row[0]: float(row[1]) for row in cursor.fetchall()}


def index_scan_settings(cursor: CursorWrapper, *, limit: int) -> None:
    """``SET LOCAL`` the HNSW scan settings for a ``limit``-row scan (inside a transaction).

    A statement of its own, before the search: the index scan must see them,
    and within one statement nothing orders a ``set_config`` before the scan.
    """
    cursor.execute(
        "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),"
        " set_config('hnsw.ef_search', %s, true),"
        " set_config('hnsw.max_scan_tuples', %s, true)",
        [str(max(HNSW_EF_SEARCH, limit)), str(HNSW_MAX_SCAN_TUPLES)],
    )


def nearest_per_resource(
    cursor: CursorWrapper,
    *,
    workspace_id: uuid.UUID,
    resource_ids: Sequence[uuid.UUID],
    vector: str,
    limit: int,
) -> dict[uuid.UUID, float]:
    """The ``limit`` most similar ready passages of each named resource (exact)."""
    cursor.execute(
        _PER_RESOURCE,
        {
            "vector": vector,
            "workspace": workspace_id,
            "ready": READY,
            "resources": list(resource_ids),
            "per_resource": limit,
        },
    )
    return {row[0]: float(row[1]) for row in cursor.fetchall()}
