"""A search that may read few of a large workspace's documents is searched
exactly among them.

A filter, the groups or a token's resources that keep, say, 1 % of a
workspace too large for exact search leave the dense leg's index scan
walking about a hundred index entries for each one that passes, and the
planner, which cannot tell how much a condition on the metadata keeps,
never prefers the exact path (docs/retrieval.md, "Filtered search at
scale"). So the resources the search may read are read first (one pass
over the workspace's resources, stopping one row past the bound below);
when their passages number at most ``dense.EXACT_MAX_PASSAGES`` and
at most ``NARROW_MAX_SHARE`` of the workspace's, the search names them
(``statements.eligible`` then confines every leg to
``p.resource_id = ANY(…)``, which the planner reads through the
``(workspace, resource)`` b-tree) and computes every distance: exact, so
nothing is lost to the index. The access's own conditions stay in the
statements, checked again.

The share: an index scan's cost grows as the share read shrinks (about
50 / share index entries for the hybrid's 50 candidates), exact search's
with the passages read. Measured on the 98,000-passage workspace of
``bench/retrieval_latency.py --sizes 100000 --filtered``: a 1 % filter,
980 passages, narrowed: hybrid p50 / p95 24.3 / 30.2 ms (the index scan:
193.6 / 311.7 ms); a 10 % filter, 9,800 passages, narrowed: dense 79.6 /
116.8 ms against the index scan's 21.5 / 41.8 ms. Between the two, 5 %.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace

from django.db.backends.utils import CursorWrapper
from psycopg import sql

from resources.models import ResourceStatus
from retrieval.filters import Access, AccessShape, access_condition
from retrieval.search import dense, statements
from retrieval.search.stats import workspace_stats

# A search reading at most this share of the workspace's passages is narrowed (module doc).
NARROW_MAX_SHARE = 0.05

_READABLE = """
SELECT r.id, r.passage_count FROM {resource} r
WHERE r.workspace_id = %(workspace)s AND r.status = {ready} AND {access}
LIMIT %(cap)s
"""


@statements.composed
def _readable(access: AccessShape) -> sql.Composed:
    return sql.SQL(_READABLE).format(
        resource=statements.RESOURCE,
        ready=sql.Literal(ResourceStatus.READY.value),
        access=access_condition(access, table=sql.Identifier("r")),
    )


@dataclass(frozen=True)
class Narrowing:
    access: Access
    exact: bool  # every distance computed, whatever the workspace's size


def narrowed(cursor: CursorWrapper, *, workspace_id: uuid.UUID, access: Access) -> Narrowing | None:
    """How to search what ``access`` may read of the workspace (module doc);
    None when it may read nothing: no search at all."""
    shape = access.shape
    if shape is None:
        return Narrowing(access, exact=False)
    passages = workspace_stats(cursor, workspace_id=workspace_id).passages
    if passages <= dense.EXACT_MAX_PASSAGES:
        return Narrowing(access, exact=False)  # searched exactly anyway
    most = min(dense.EXACT_MAX_PASSAGES, int(NARROW_MAX_SHARE * passages))
    cap = most + 1
    cursor.execute(_readable(shape), {"workspace": workspace_id, "cap": cap, **access.params()})
    rows = cursor.fetchall()
    if not rows:
        return None
    if len(rows) == cap or sum(count for _, count in rows) > most:
        return Narrowing(access, exact=False)
    return Narrowing(replace(access, resource_ids=tuple(row[0] for row in rows)), exact=True)
