"""The lexical leg: Okapi BM25 over PostgreSQL full-text search.

Documents are ``Passage.search_vector`` (a generated ``tsvector`` of the
passage's analysed terms, ``Passage.lexical_text``: stemmed and without stop
words in the passage's language, languages/analysis.py, with
positions); the query is analysed the same way in Python
(:func:`analysis.query_text`), parsed by the same configuration (``simple``)
and matched with an OR of its lexemes, served by the GIN index. PostgreSQL's own ``ts_rank`` has no inverse
document frequency, so a rare term weighs as much as a common one; BM25 is
computed instead, in SQL:

    score(d) = sum over query lexemes t in d of
               idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl))
    idf(t)   = ln(1 + (N - df + 0.5) / (df + 0.5))

and normalised by what the query could score at most, the sum over all its
lexemes of ``idf(t) * (k1 + 1)`` (``ceiling``; a lexeme no passage holds
counts with ``df`` 0), so that a passage sharing one common word of a long
query scores little even when no passage shares more (docs/retrieval.md,
"Scores").

``tf`` is the lexeme's number of positions in the passage, ``|d|`` the number
of distinct lexemes in it; ``df`` comes from ``WorkspaceLexeme`` (kept by
triggers); ``N`` (ready passages) and ``avgdl`` change slowly and are cached
per workspace (:mod:`retrieval.search.stats`); ``k1`` and ``b`` are
:data:`statements.BM25_K1` and :data:`statements.BM25_B`, beside the formula
(:data:`statements.BM25_RANKED`), which the hybrid statement holds too.

Scoring every passage that shares a word with a long query costs time in
proportion to the workspace; candidates are therefore the passages holding
the query's *rarest* lexemes, up to :data:`LEXICAL_BUDGET` passages in all
(plus the dense leg's candidates, which are always scored).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.backends.utils import CursorWrapper
from psycopg import sql

from languages.analysis import query_text
from retrieval.filters import OPEN, Access, AccessShape
from retrieval.search import statements
from retrieval.search.stats import workspace_stats

# Most passages the lexical leg selects by its rarest lexemes (bench/retrieval_latency).
LEXICAL_BUDGET = 500

_DOCUMENT_FREQUENCIES = sql.SQL("""
SELECT lexeme, passages FROM {workspace_lexeme}
WHERE workspace_id = %s AND lexeme = ANY(%s::text[]) AND passages > 0
""").format(workspace_lexeme=statements.WORKSPACE_LEXEME)

# The query's lexemes and their document frequencies in one round trip
# (NULL: no passage of the workspace has it).
_QUERY_FREQUENCIES = sql.SQL("""
SELECT q.lexeme, w.passages
FROM unnest(tsvector_to_array(to_tsvector({config}::regconfig, %s))) AS q(lexeme)
LEFT JOIN {workspace_lexeme} w ON w.workspace_id = %s AND w.lexeme = q.lexeme AND w.passages > 0
""").format(config=statements.CONFIG, workspace_lexeme=statements.WORKSPACE_LEXEME)

_BM25 = """
WITH query_all AS (
    SELECT * FROM unnest(%(lexemes)s::text[], %(df)s::float8[]) AS q(lexeme, df)
),
query AS (SELECT * FROM query_all WHERE df > 0),
{matched},
{bm25_ranked}
SELECT id, score, ceiling FROM ranked
WHERE place <= %(limit)s
   OR id = ANY(%(extra)s::uuid[])
   OR (resource_id = ANY(%(resources)s::uuid[]) AND resource_place <= %(per_resource)s)
"""
_BM25_CANDIDATES = sql.SQL(
    "(%(match)s AND p.search_vector @@ %(tsquery)s::tsquery) OR p.id = ANY(%(extra)s::uuid[])"
)


@statements.composed
def _bm25(*, access: AccessShape | None = None) -> sql.Composed:
    return sql.SQL(_BM25).format(
        matched=statements.matched(
            lexemes=sql.SQL("%(lexemes)s::text[]"), candidates=_BM25_CANDIDATES, access=access
        ),
        bm25_ranked=statements.BM25_RANKED,
    )


_FIRST_PASSAGES = """
SELECT id FROM (
    SELECT p.id, row_number() OVER (PARTITION BY p.resource_id ORDER BY p.ordinal, p.id) AS place
    FROM {passages}
    WHERE {eligible}
      AND p.resource_id = ANY(%(resources)s::uuid[])
) ordered
WHERE place <= %(limit)s
"""


@statements.composed
def _first_passages(*, access: AccessShape | None = None) -> sql.Composed:
    return sql.SQL(_FIRST_PASSAGES).format(
        passages=statements.PASSAGES_WITH_RESOURCES, eligible=statements.eligible(joined=True, access=access)
    )


@dataclass(frozen=True)
class LexicalResult:
    scores: dict[uuid.UUID, float]
    best: float  # the highest BM25 score of any passage in the workspace
    # What the query could score at most (module docstring): the normaliser.
    ceiling: float = 0.0

    def normalised(self) -> dict[uuid.UUID, float]:
        """Each score divided by the ceiling, in [0, 1)."""
        return {pid: s / self.ceiling for pid, s in self.scores.items()} if self.ceiling > 0 else {}

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[Any]]) -> LexicalResult:
        """The BM25 statement's rows: ``(id, score, ceiling)``, the ceiling the same on each."""
        scores = {row[0]: float(row[1]) for row in rows}
        return cls(
            scores=scores, best=max(scores.values(), default=0.0), ceiling=float(rows[0][2]) if rows else 0.0
        )


def query_lexemes(cursor: CursorWrapper, text: str) -> list[str]:
    """The query's distinct lexemes, analysed exactly as the passages are."""
    cursor.execute(
        sql.SQL("SELECT array(SELECT lexeme FROM unnest(to_tsvector({config}::regconfig, %s)))").format(
            config=statements.CONFIG
        ),
        [query_text(text)],
    )
    row = cursor.fetchone()
    return list(row[0]) if row and row[0] else []


def query_frequencies(cursor: CursorWrapper, *, workspace_id: uuid.UUID, text: str) -> dict[str, int]:
    """The query's lexemes with the passages of the workspace holding each (0:
    none): :func:`query_lexemes` and :func:`document_frequencies` in one statement."""
    cursor.execute(_QUERY_FREQUENCIES, [query_text(text), workspace_id])
    return {row[0]: int(row[1] or 0) for row in cursor.fetchall()}


def or_tsquery(lexemes: Sequence[str]) -> str:
    """``'a' | 'b' | ...``: quoted, so lexemes are matched as they are (no
    second normalisation); quotes and backslashes inside are doubled."""
    return " | ".join("'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'" for lexeme in lexemes)


def document_frequencies(
    cursor: CursorWrapper, *, workspace_id: uuid.UUID, lexemes: Sequence[str]
) -> dict[str, int]:
    """Passages of the workspace containing each lexeme (absent: none)."""
    cursor.execute(_DOCUMENT_FREQUENCIES, [workspace_id, list(lexemes)])
    return {row[0]: int(row[1]) for row in cursor.fetchall()}


def matching_lexemes(frequencies: dict[str, int], *, budget: int, at_least_one: bool) -> list[str]:
    """The rarest lexemes whose passages together stay within ``budget``.

    They select the lexical leg's candidates; every query lexeme still counts
    in the score. A passage that contains only the workspace's common
    lexemes is left out, as it could only reach a low BM25 score. With
    ``at_least_one`` the rarest lexeme is kept even past the budget.
    """
    chosen: list[str] = []
    total = 0
    for lexeme, df in sorted(frequencies.items(), key=lambda item: (item[1], item[0])):
        if total + df > budget and (chosen or not at_least_one):
            break
        chosen.append(lexeme)
        total += df
    return chosen


def _frequencies(
    cursor: CursorWrapper, *, workspace_id: uuid.UUID, lexemes: Sequence[str] | Mapping[str, int]
) -> dict[str, int]:
    """Every query lexeme with the passages holding it (0: none): ``lexemes``
    as a mapping are those already, a sequence is looked up."""
    if isinstance(lexemes, Mapping):
        return dict(lexemes)
    held_by = document_frequencies(cursor, workspace_id=workspace_id, lexemes=lexemes)
    return dict.fromkeys(lexemes, 0) | held_by


def bm25(
    cursor: CursorWrapper,
    *,
    workspace_id: uuid.UUID,
    model: str,
    lexemes: Sequence[str] | Mapping[str, int],
    limit: int,
    extra_ids: Sequence[uuid.UUID] = (),
    named: tuple[Sequence[uuid.UUID], int] = ((), 0),
    access: Access = OPEN,
) -> LexicalResult:
    """BM25 scores of the ``limit`` best candidates, of ``extra_ids`` and,
    ``named`` being ``(resource_ids, per_resource)``, of the
    ``per_resource`` best candidates of each of ``resource_ids`` (a passage
    without a query lexeme scores 0 and is left out).

    Candidates: ready passages containing one of the rarest query lexemes
    (at most :data:`LEXICAL_BUDGET` passages in all, :func:`matching_lexemes`), plus
    ``extra_ids``. ``best`` is the highest score among them, ``ceiling`` the
    highest the query could reach; only passages ``access`` may read are
    candidates (the filter is in the resource's lookup). ``lexemes``
    given as a mapping are the frequencies already (:func:`query_frequencies`;
    0: no passage holds it, which still counts in the ``ceiling``).
    """
    frequencies = _frequencies(cursor, workspace_id=workspace_id, lexemes=lexemes)
    held = {lexeme: df for lexeme, df in frequencies.items() if df > 0}
    if not held:
        return LexicalResult(scores={}, best=0.0)
    matching = matching_lexemes(held, budget=LEXICAL_BUDGET, at_least_one=not extra_ids)
    stats = workspace_stats(cursor, workspace_id=workspace_id)
    cursor.execute(
        _bm25(access=access.shape),
        {
            **access.params(),
            "lexemes": list(frequencies),
            "df": [float(df) for df in frequencies.values()],
            "match": bool(matching),
            "tsquery": or_tsquery(matching or list(held)[:1]),
            "workspace": workspace_id,
            "model": model,
            "n": stats.passages,
            "avgdl": max(stats.average_length, 1.0),
            "limit": limit,
            "extra": list(extra_ids),
            "resources": list(named[0]),
            "per_resource": named[1],
        },
    )
    return LexicalResult.from_rows(cursor.fetchall())


def first_passages(
    cursor: CursorWrapper,
    *,
    workspace_id: uuid.UUID,
    model: str,
    resource_ids: Sequence[uuid.UUID],
    limit: int,
    access: Access = OPEN,
) -> list[uuid.UUID]:
    """The first ``limit`` ready passages of each resource, in document order.

    With the lexical leg alone, a named resource none of whose passages
    shares a lexeme with the query is still represented by these (score 0).
    """
    cursor.execute(
        _first_passages(access=access.shape),
        {
            **access.params(),
            "workspace": workspace_id,
            "model": model,
            "resources": list(resource_ids),
            "limit": limit,
        },
    )
    return [row[0] for row in cursor.fetchall()]
