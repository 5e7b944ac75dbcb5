"""A hybrid search (both legs) in one statement, one round trip.

The statement does what the legs' functions do one statement each
(:mod:`retrieval.search.dense`, :mod:`retrieval.search.lexical`), with the
same fragments (:mod:`retrieval.search.statements`, where the passages a
search may return are said once) and the same results:

1. the dense leg's ``limit`` nearest passages (exact or through the HNSW
   index, :func:`statements.nearest`), and the ``per_resource`` nearest of
   each named resource (:func:`statements.nearest_per_resource`);
2. the query's lexemes (its text analysed in Python as the passages were,
   :func:`analysis.query_text`) with their document frequencies, and the rarest of
   them within :data:`lexical.LEXICAL_BUDGET` as a tsquery
   (:func:`lexical.matching_lexemes`, :func:`lexical.or_tsquery`; the
   rarest one past the budget only when the dense leg found nothing);
3. BM25 of the passages holding those lexemes and of the dense candidates
   (:func:`statements.matched`, :data:`statements.BM25_RANKED`, as in
   :func:`lexical.bm25`), divided by what the query could score at most:
   the ``limit`` best, the dense candidates and the ``per_resource`` best of
   each named resource;
4. the cosine similarity of every candidate, the fused score, and the
   ``k`` best plus the ``per_resource_k`` best of each named resource
   (what ``service._select`` does with the scores of one leg), with their
   texts and titles.

Only the HNSW settings of a large workspace go first, in a statement of
their own (:func:`dense.index_scan_settings`: the scan must see them, and
within one statement nothing orders a ``set_config`` before the scan).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.backends.utils import CursorWrapper
from psycopg import sql

from languages.analysis import query_text
from retrieval.filters import OPEN, Access, AccessShape
from retrieval.search import dense, lexical, statements
from retrieval.search.stats import workspace_stats

# Ties in the fused score are broken by the passage id's text (the order the
# single-leg searches sort by in Python, str(uuid)); "C": byte order, not the
# database's collation.
_HYBRID = r"""
WITH dense AS (
    SELECT id FROM ({nearest}) nearest
    UNION
    SELECT id FROM ({per_resource}) per_resource
),
-- The query's lexemes (every one counts in BM25's ceiling, statements.BM25_RANKED,
-- one no passage holds with df 0), and those that the workspace's passages
-- hold (query): how many hold each
-- (df) and, rarest first (ties by lexeme in code-point order, as Python
-- sorts), the running total of df (lexical.matching_lexemes). Rows in the
-- tsvector's own lexeme order: BM25 adds a passage's terms in the order its
-- join yields them, which is then the passage's tsvector order whichever side
-- the planner hashes, as in the lexical leg's statement. Float addition is not
-- associative, and passages with the same text tie on BM25 down to the last bit.
query_all AS (
    SELECT q.lexeme, coalesce(w.passages, 0)::float8 AS df, q.place
    FROM unnest(tsvector_to_array(to_tsvector({config}::regconfig, %(text)s)))
         WITH ORDINALITY AS q(lexeme, place)
    LEFT JOIN {workspace_lexeme} w
      ON w.workspace_id = %(workspace)s AND w.lexeme = q.lexeme AND w.passages > 0
),
query AS (
    SELECT lexeme, df,
           row_number() OVER rarest AS rarity,
           sum(df) OVER rarest AS running
    FROM query_all
    WHERE df > 0
    WINDOW rarest AS (ORDER BY df, lexeme COLLATE "C" ROWS UNBOUNDED PRECEDING)
    ORDER BY place
),
-- The rarest lexemes within the budget, quoted as lexical.or_tsquery quotes
-- them (NULL: none; then only the dense candidates are scored).
terms AS (
    SELECT array_agg(lexeme) AS lexemes,
           (string_agg('''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || '''', ' | ')
               FILTER (WHERE running <= {budget} OR (rarity = 1 AND NOT EXISTS (SELECT FROM dense)))
           )::tsquery AS tsquery
    FROM query
),
-- The tsquery and the dense candidates as one-value subqueries: computed
-- first, then the GIN and primary-key indexes serve them like constants
-- (but the planner cannot weigh the tsquery's selectivity: see _MATCH_SCAN).
{matched},
{bm25_ranked},
lexical AS (
    SELECT id, CASE WHEN ceiling > 0 THEN score / ceiling ELSE 0 END AS normalised
    FROM ranked
    WHERE place <= %(limit)s
       OR id = ANY((SELECT array_agg(id) FROM dense)::uuid[])
       OR (resource_id = ANY(%(resources)s::uuid[]) AND resource_place <= %(per_resource)s)
),
fused AS (
    SELECT p.id, p.resource_id, s.similarity, s.normalised,
           %(dense_weight)s::float8 * s.similarity + (1 - %(dense_weight)s::float8) * s.normalised AS score
    FROM (SELECT id FROM dense UNION SELECT id FROM lexical) c
    JOIN {passage} p ON p.id = c.id
    LEFT JOIN lexical l ON l.id = c.id
    CROSS JOIN LATERAL (
        SELECT 1 - (p.embedding <=> %(vector)s::vector) AS similarity, coalesce(l.normalised, 0) AS normalised
    ) s
),
chosen AS (
    SELECT f.*,
           row_number() OVER (ORDER BY score DESC, id::text COLLATE "C") AS place,
           row_number() OVER (PARTITION BY resource_id ORDER BY score DESC, id::text COLLATE "C")
               AS resource_place
    FROM fused f
)
SELECT c.id, c.resource_id, r.title, p.text, c.score, p.ordinal, p.page, c.similarity, c.normalised,
       p.language, p.bbox
FROM chosen c
JOIN {passage} p ON p.id = c.id
JOIN {resource} r ON r.id = c.resource_id
WHERE c.place <= %(k)s
   OR (c.resource_id = ANY(%(resources)s::uuid[]) AND c.resource_place <= %(per_resource_k)s)
ORDER BY c.score DESC, c.id::text COLLATE "C"
"""

# The lexical leg's candidates: the passages matching the tsquery, and the
# dense candidates.
_CANDIDATES = "{match} OR p.id = ANY((SELECT array_agg(id) FROM dense)::uuid[])"
# The match through the GIN index (its postings span every workspace)...
_MATCH_INDEXED = sql.SQL("p.search_vector @@ (SELECT tsquery FROM terms)")
# ... or, for a small workspace, checked on each of its passages: the function
# form of @@ is not indexable. With the tsquery known, the planner made this
# choice itself; as a subquery's value it took the GIN index for a workspace
# of 20 passages in a 30,000-passage table (bench/retrieval_latency).
_MATCH_SCAN = sql.SQL("ts_match_vq(p.search_vector, (SELECT tsquery FROM terms))")
# Up to this many passages the workspace's own passages are checked.
SCAN_MAX_PASSAGES = 1_000


# The workspace's passages among the matches. Not knowing the tsquery, the
# planner guesses 5,000 matches and ANDs them with a bitmap of the
# workspace's every passage: right for a workspace that is a small share of
# the table (the GIN postings span every workspace: a 12,000-passage
# workspace in a 1,000,000-passage table searched in p50 121 ms without the
# AND, 39 with it), wrong for one that is a large share (the bitmap alone
# took 30 ms at 300,000 of 1,000,000, for a hundred matches). From
# LARGE_SHARE of the table on, the condition is kept off the workspace's
# b-tree index (statements.eligible's workspace_by_text) and the few matches
# are checked one by one (bench/retrieval_latency --sizes 1000000).
LARGE_SHARE = 0.1


@statements.composed
def _statement(
    *, exact: bool, scan: bool, large_share: bool, access: AccessShape | None = None
) -> sql.Composed:
    """The one statement: the dense leg exact or through the HNSW index; the
    lexical match checked on each passage (``scan``) or through the GIN
    index; the workspace's b-tree index left out (``large_share``); only
    passages of resources ``access`` may read, in every leg."""
    candidates = sql.SQL(_CANDIDATES).format(match=_MATCH_SCAN if scan else _MATCH_INDEXED)
    return sql.SQL(_HYBRID).format(
        nearest=statements.nearest(exact=exact, access=access),
        per_resource=statements.nearest_per_resource(access=access),
        config=statements.CONFIG,
        workspace_lexeme=statements.WORKSPACE_LEXEME,
        budget=sql.Literal(lexical.LEXICAL_BUDGET),
        matched=statements.matched(
            lexemes=sql.SQL("(SELECT lexemes FROM terms)"),
            candidates=candidates,
            workspace_by_text=large_share,
            access=access,
        ),
        bm25_ranked=statements.BM25_RANKED,
        passage=statements.PASSAGE,
        resource=statements.RESOURCE,
    )


@dataclass(frozen=True)
class HybridQuery:
    workspace_id: uuid.UUID
    model: str  # the workspace's embedding model: the vector's and the passages'
    query: str
    vector: str
    k: int
    named: Sequence[uuid.UUID]
    per_resource_k: int
    limit: int  # each leg's candidates
    per_resource: int  # each leg's candidates within each named resource
    dense_weight: float
    access: Access = OPEN  # who may read what (retrieval/filters.py)
    # The dense leg computes every distance whatever the workspace's size:
    # what ``access`` reads is few passages (service.narrowed).
    exact: bool = False


@dataclass(frozen=True)
class HybridRow:
    passage_id: uuid.UUID
    resource_id: uuid.UUID
    resource_title: str
    text: str
    score: float
    ordinal: int
    page: int | None
    dense_score: float
    lexical_score: float
    language: str
    bbox: list[float] | None

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> HybridRow:
        """One row of the statement (its ``SELECT`` list, in order)."""
        return cls(
            passage_id=row[0],
            resource_id=row[1],
            resource_title=row[2],
            text=row[3],
            score=float(row[4]),
            ordinal=row[5],
            page=row[6],
            dense_score=float(row[7]),
            lexical_score=float(row[8]),
            language=row[9],
            # Django has psycopg hand jsonb over as its text.
            bbox=json.loads(row[10]) if isinstance(row[10], str) else row[10],
        )


def hybrid_search(cursor: CursorWrapper, search: HybridQuery) -> list[HybridRow]:
    """The chosen passages, best first (module docstring). Must run inside a
    transaction: the HNSW settings are ``SET LOCAL``."""
    stats = workspace_stats(cursor, workspace_id=search.workspace_id)
    exact = search.exact or stats.passages <= dense.EXACT_MAX_PASSAGES
    if not exact:
        dense.index_scan_settings(cursor, limit=search.limit)
    scan = stats.passages <= SCAN_MAX_PASSAGES
    # A workspace's share of the table matters only to the match through the GIN index.
    large_share = not (exact or scan) and stats.passages >= LARGE_SHARE * stats.table_passages
    params: dict[str, Any] = {
        "vector": search.vector,
        "workspace": search.workspace_id,
        "model": search.model,
        "limit": search.limit,
        "resources": list(search.named),
        "per_resource": search.per_resource,
        "text": query_text(search.query),
        "n": stats.passages,
        "avgdl": max(stats.average_length, 1.0),
        "dense_weight": search.dense_weight,
        "k": search.k,
        "per_resource_k": search.per_resource_k,
        **search.access.params(),
    }
    shape = search.access.shape
    # A workspace whose passages are checked one by one is searched exactly
    # too (it is below EXACT_MAX_PASSAGES unless that limit is lowered).
    exact = exact or scan
    cursor.execute(_statement(exact=exact, scan=scan, large_share=large_share, access=shape), params)
    rows = cursor.fetchall()
    if not exact and len(rows) < min(search.k, stats.passages):
        # The HNSW scan ran out of reachable nodes (dense.py), or fewer
        # than k passages pass the filter: search exactly.
        cursor.execute(_statement(exact=True, scan=scan, large_share=large_share, access=shape), params)
        rows = cursor.fetchall()
    return [HybridRow.from_row(row) for row in rows]
