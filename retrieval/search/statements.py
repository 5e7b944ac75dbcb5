"""The fragments every search statement is composed of (``psycopg.sql``).

The dense leg (exact and through an HNSW index, and each named resource's
nearest), the lexical leg (BM25, a named resource's first passages) and the
hybrid statement are built from these values with ``SQL(...).format(...)``:

- the tables, named by their models (retrieval/tables.py: ``PASSAGE``,
  ``RESOURCE``, ``WORKSPACE_LEXEME``);
- :func:`eligible`: which passages of the workspace a search may return
  (those of ready resources whose vector the workspace's embedding model
  made, ``Workspace.embedding_model``). Every leg's ``WHERE`` is this fragment and the leg's own condition,
  so a new condition on passages (a language) is added there, once, and
  reaches every path; so is who may read what (:mod:`retrieval.filters`:
  metadata filters, end-user groups, a token's resources), a condition on
  the passage's resource;
- the dense leg's nearest passages (:func:`nearest`,
  :func:`nearest_per_resource`) and the lexical leg's candidates and BM25
  (:func:`matched`, :data:`BM25_RANKED`), which hybrid.py puts in one
  statement beside the legs' own statements (dense.py, lexical.py).

The code's constants (the ready status, the text search configuration,
BM25's ``k1`` and ``b``) are literals; what changes with each search is a
placeholder (``%(workspace)s``, ``%(vector)s``, ...), bound at execution, and
each fragment's docstring names the ones it needs. Bound client-side, both
reach the server as the same text, so the workspace stays a literal there
(which lets the planner prove a workspace's own HNSW index applies,
retrieval/workspace_index.py).

A leg's statement depends only on its plan choices (exact or not, ...) and,
for a search that not everything may be read by, on the shape of its access
condition (:class:`retrieval.filters.AccessShape`: a filter's structure, not
its keys or values, which are bound parameters): :func:`composed` composes
and renders it once for each, the unfiltered ones kept for good and the
filtered ones :data:`FILTERED_SHAPES_KEPT` at most.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, cast

from psycopg import sql

from resources.models import ResourceStatus
from retrieval.filters import AccessShape, access_condition
from retrieval.models import TEXT_SEARCH_CONFIG
from retrieval.tables import PASSAGE as PASSAGE
from retrieval.tables import RESOURCE as RESOURCE
from retrieval.tables import WORKSPACE_LEXEME as WORKSPACE_LEXEME

P = ParamSpec("P")
_forget: list[Callable[[], None]] = []  # each rendered statement's cache_clear


# Statements of filtered searches kept per builder: a filter's shape is the
# client's to choose, so their number is bounded (least recently used go).
FILTERED_SHAPES_KEPT = 256


def composed(build: Callable[P, sql.Composable]) -> Callable[P, str]:
    """``build``'s statement, composed and rendered once for each set of
    arguments (its plan choices, hashable): the hybrid statement took about
    0.7 ms to compose and render, which a search need not pay every time.
    An ``access`` argument other than None (a filtered search's shape) is
    kept in a bounded cache of its own."""

    def render(*args: Any, **kwargs: Any) -> str:
        return build(*args, **kwargs).as_string()

    unfiltered = functools.cache(render)
    filtered = functools.lru_cache(maxsize=FILTERED_SHAPES_KEPT)(render)
    _forget.extend([unfiltered.cache_clear, filtered.cache_clear])

    def cached(*args: Any, **kwargs: Any) -> str:
        return (unfiltered if kwargs.get("access") is None else filtered)(*args, **kwargs)

    return cast("Callable[P, str]", functools.wraps(build)(cached))


def recompose() -> None:
    """Forget the rendered statements: the next searches compose them again
    (for a test that changes a fragment)."""
    for forget in _forget:
        forget()


READY = sql.Literal(ResourceStatus.READY.value)
# `{config}::regconfig`: how the passages' search_vector is parsed (models.py).
CONFIG = sql.Literal(TEXT_SEARCH_CONFIG)

# BM25 parameters: the usual values for short passages (Anserini, BEIR).
BM25_K1 = 0.9
BM25_B = 0.4

# Passages ``p`` with their resources ``r``, for the statements that check
# the resource's status by a join (:func:`eligible` with ``joined``).
PASSAGES_WITH_RESOURCES = sql.SQL("{passage} p\nJOIN {resource} r ON r.id = p.resource_id").format(
    passage=PASSAGE, resource=RESOURCE
)

_IN_WORKSPACE = sql.SQL("p.workspace_id = %(workspace)s")
# The same condition kept off the workspace's b-tree index (hybrid.LARGE_SHARE says why).
_IN_WORKSPACE_BY_TEXT = sql.SQL("p.workspace_id::text = %(workspace)s::text")
# Vectors of two models are never compared: a search passes its workspace's
# model (Workspace.embedding_model, which its query is embedded with); when
# EMBEDDING_MODEL_NAME changes, a workspace keeps its model, and so its
# vectors, until its passages are embedded again (retrieval/reembedding.py).
_OF_MODEL = sql.SQL("p.embedding_model = %(model)s")
_READY_JOINED = sql.SQL("r.status = {ready}").format(ready=READY)
# The resource's status looked up per candidate (a few hundred primary-key
# probes): as a join, the planner hashed the whole resources table for a
# large workspace (bench/retrieval_latency: BM25 p50 50 -> 15 ms at 300,000).
_READY_PROBED = sql.SQL("(SELECT r.status FROM {resource} r WHERE r.id = p.resource_id) = {ready}").format(
    resource=RESOURCE, ready=READY
)
# The same probe with who may read what (retrieval.filters): one lookup per candidate still.
_READABLE_PROBED = (
    "EXISTS (SELECT FROM {resource} r WHERE r.id = p.resource_id AND r.status = {ready} AND {access})"
)
_RESOURCE_ALIAS = sql.Identifier("r")


def eligible(
    *, joined: bool, workspace_by_text: bool = False, access: AccessShape | None = None
) -> sql.Composed:
    """The passages ``p`` of the workspace ``%(workspace)s`` that a search may
    return: those of ready resources embedded by the model ``%(model)s`` (the
    workspace's ``embedding_model``, which the query vector is of). Every
    leg's ``WHERE`` starts with this, so a condition on passages added here
    reaches every leg.

    ``joined``: the statement joins the resource as ``r``
    (:data:`PASSAGES_WITH_RESOURCES`); otherwise its status is looked up per
    candidate. ``workspace_by_text``: the workspace's b-tree index is not to
    be used (hybrid.LARGE_SHARE). ``access``: the shape of who may read what
    (None: everything), a condition on the resource whose values are the
    search's ``Access.params()``; inside the leg's ``WHERE``, so a leg's
    ``LIMIT`` counts only passages that may be read.
    """
    if access is None:
        ready: sql.Composable = _READY_JOINED if joined else _READY_PROBED
    elif access.resources:
        # The resources named on the passage as well: the planner then reads
        # their passages through the (workspace, resource) b-tree rather than
        # every passage of the workspace (service.narrowed).
        condition = access_condition(access, table=_RESOURCE_ALIAS)
        readable = (
            sql.SQL("{ready} AND {access}").format(ready=_READY_JOINED, access=condition)
            if joined
            else sql.SQL(_READABLE_PROBED).format(resource=RESOURCE, ready=READY, access=condition)
        )
        ready = sql.SQL("p.resource_id = ANY(%(access_resources)s::uuid[]) AND {readable}").format(
            readable=readable
        )
    else:
        condition = access_condition(access, table=_RESOURCE_ALIAS)
        ready = (
            sql.SQL("{ready} AND {access}").format(ready=_READY_JOINED, access=condition)
            if joined
            else sql.SQL(_READABLE_PROBED).format(resource=RESOURCE, ready=READY, access=condition)
        )
    return sql.SQL("{workspace} AND {model} AND {ready}").format(
        workspace=_IN_WORKSPACE_BY_TEXT if workspace_by_text else _IN_WORKSPACE,
        model=_OF_MODEL,
        ready=ready,
    )


# Similarity is 1 - cosine distance, i.e. the cosine similarity in [-1, 1].
_NEAREST = """
SELECT p.id, 1 - (p.embedding <=> %(vector)s::vector) AS similarity
FROM {passages}
WHERE {eligible}
ORDER BY {distance}
LIMIT %(limit)s
"""
_DISTANCE = sql.SQL("p.embedding <=> %(vector)s::vector")
# "+ 0" keeps the planner off the HNSW index: order by the exact distance.
_EXACT_DISTANCE = sql.SQL("(p.embedding <=> %(vector)s::vector) + 0")


def nearest(*, exact: bool, access: AccessShape | None = None) -> sql.Composed:
    """``(id, similarity)`` of the ``%(limit)s`` eligible passages nearest
    ``%(vector)s``: every distance computed (``exact``), or through an HNSW
    index (its scan settings first: dense.index_scan_settings)."""
    return sql.SQL(_NEAREST).format(
        passages=PASSAGES_WITH_RESOURCES,
        eligible=eligible(joined=True, access=access),
        distance=_EXACT_DISTANCE if exact else _DISTANCE,
    )


_PER_RESOURCE = """
SELECT id, similarity FROM (
    SELECT p.id, s.similarity,
           row_number() OVER (PARTITION BY p.resource_id ORDER BY s.similarity DESC, p.id) AS place
    FROM {passages}
    CROSS JOIN LATERAL (SELECT 1 - (p.embedding <=> %(vector)s::vector) AS similarity) s
    WHERE {eligible}
      AND p.resource_id = ANY(%(resources)s::uuid[])
) ranked
WHERE place <= %(per_resource)s
"""


def nearest_per_resource(*, access: AccessShape | None = None) -> sql.Composed:
    """``(id, similarity)`` of the ``%(per_resource)s`` eligible passages
    nearest ``%(vector)s`` in each of ``%(resources)s`` (exact)."""
    return sql.SQL(_PER_RESOURCE).format(
        passages=PASSAGES_WITH_RESOURCES, eligible=eligible(joined=True, access=access)
    )


_MATCHED = """
matched AS (
    SELECT p.id, p.resource_id, length(p.search_vector) AS dl,
           -- only the query's lexemes, with their positions
           ts_filter(setweight(p.search_vector, 'A', {lexemes}), '{{a}}') AS hits
    FROM {passage} p
    WHERE {eligible}
      AND ({candidates})
)"""


def matched(
    *,
    lexemes: sql.Composable,
    candidates: sql.Composable,
    workspace_by_text: bool = False,
    access: AccessShape | None = None,
) -> sql.Composed:
    """The ``matched`` CTE :data:`BM25_RANKED` scores: the eligible passages
    that are ``candidates`` (a condition on ``p``), with their length and
    their ``lexemes`` (a ``text[]``) with positions."""
    return sql.SQL(_MATCHED).format(
        lexemes=lexemes,
        passage=PASSAGE,
        eligible=eligible(joined=False, workspace_by_text=workspace_by_text, access=access),
        candidates=candidates,
    )


# BM25 of every passage in ``matched`` (id, resource_id, dl: its length, hits:
# its query lexemes with their positions) over the query's lexemes in
# ``query`` (lexeme, df: those the workspace holds), with ``%(n)s`` passages
# of average length ``%(avgdl)s``; ranked overall and within each resource,
# each with the ``ceiling`` that normalises it: what the query could score at
# most, the sum over all its lexemes in ``query_all`` (lexeme, df: 0 for one
# no passage holds) of idf * (k1 + 1), a term's limit as its frequency grows.
# A passage sharing only the query's commonest word, or only the one word of
# a long query the workspace holds, scores little however it ranks. One
# formula for the lexical leg and the hybrid statement.
_IDF = sql.SQL("ln(1 + (greatest(%(n)s::float8, q.df) - q.df + 0.5) / (q.df + 0.5))")
BM25_RANKED = sql.SQL("""
scored AS (
    SELECT m.id, m.resource_id,
           -- float8 throughout: numeric arithmetic is several times slower
           sum({idf}
               * cardinality(h.positions) * ({k1}::float8 + 1)
               / (cardinality(h.positions)
                  + {k1}::float8 * (1 - {b}::float8 + {b}::float8 * m.dl / %(avgdl)s::float8))
           ) AS score
    FROM matched m
    CROSS JOIN LATERAL unnest(m.hits) AS h
    JOIN query q ON q.lexeme = h.lexeme
    GROUP BY m.id, m.resource_id
),
ranked AS (
    SELECT id, resource_id, score,
           row_number() OVER (ORDER BY score DESC, id) AS place,
           row_number() OVER (PARTITION BY resource_id ORDER BY score DESC, id) AS resource_place,
           (SELECT sum({idf} * ({k1}::float8 + 1)) FROM query_all q) AS ceiling
    FROM scored
)""").format(idf=_IDF, k1=sql.Literal(BM25_K1), b=sql.Literal(BM25_B))
