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

An HNSW graph does not promise that every node is reachable: a few passages
far from a dense cluster of another workspace's can lie outside what the scan
walks, and it ends short of ``limit``. A scan that returns fewer than
``limit`` rows is therefore repeated exactly: complete beats fast, and it
happens only when the index has failed the workspace.

bench/retrieval_latency measures both (recall@10 against exact search).
The statements are :func:`statements.nearest` and
:func:`statements.nearest_per_resource`, which the hybrid statement holds too.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from django.db.backends.utils import CursorWrapper

from retrieval.filters import OPEN, Access
from retrieval.search import statements

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


_nearest = statements.composed(statements.nearest)
_nearest_per_resource = statements.composed(statements.nearest_per_resource)


def vector_literal(vector: Sequence[float]) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def nearest(
    cursor: CursorWrapper,
    *,
    workspace_id: uuid.UUID,
    model: str,
    vector: str,
    limit: int,
    exact: bool,
    access: Access = OPEN,
) -> dict[uuid.UUID, float]:
    """The ``limit`` most similar ready passages that ``access`` may read:
    ``{passage_id: cosine similarity}`` (``vector`` and the passages' of the
    embedding model ``model``).

    Must run inside a transaction: the HNSW settings are ``SET LOCAL``.
    A filtered scan is iterative like any other (:func:`index_scan_settings`):
    it goes on until ``limit`` passages pass the filter, or repeats exactly.
    """
    if not exact:
        index_scan_settings(cursor, limit=limit)
    params: dict[str, Any] = {"vector": vector, "workspace": workspace_id, "model": model, "limit": limit}
    params.update(access.params())
    cursor.execute(_nearest(exact=exact, access=access.shape), params)
    rows = cursor.fetchall()
    if not exact and len(rows) < limit:
        # The scan ran out of reachable nodes (module docstring), or fewer
        # than ``limit`` passages pass the filter.
        cursor.execute(_nearest(exact=True, access=access.shape), params)
        rows = cursor.fetchall()
    # relaxed_order may return rows slightly out of order; callers sort.
    return {row[0]: float(row[1]) for row in rows}


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
    model: str,
    resource_ids: Sequence[uuid.UUID],
    vector: str,
    limit: int,
    access: Access = OPEN,
) -> dict[uuid.UUID, float]:
    """The ``limit`` most similar ready passages of each named resource that
    ``access`` may read (exact)."""
    cursor.execute(
        _nearest_per_resource(access=access.shape),
        {
            "vector": vector,
            "workspace": workspace_id,
            "model": model,
            "resources": list(resource_ids),
            "per_resource": limit,
            **access.params(),
        },
    )
    return {row[0]: float(row[1]) for row in cursor.fetchall()}
