"""Retrieval for a turn (spec "Retrieval for a turn"; docs/retrieval.md).

Rules:
- ``top_k`` (workspace default 5) best passages across the workspace's
  *ready* resources; passages of pending, processing and failed resources
  are never candidates (deleted resources have no passages left);
- with ``resource_ids``: ``widened_top_k`` (15) best across the workspace,
  plus the best ``per_resource_k`` (3) of each named resource not already
  among them, so a named document is represented even when far from the
  query. An id that is not a resource of this workspace is a 400;
- with ``access`` (retrieval/filters.py: metadata filters, end-user groups,
  a token's resources): only passages of resources it may read, in the SQL
  of every leg, so ``top_k`` counts only those. Nothing readable: ``[]``,
  never the whole workspace.

Score (higher is better; results are sorted by it, so it never increases
with rank):
- dense only: cosine similarity of query and passage embeddings, [-1, 1];
- lexical only: BM25 divided by what the query could score at most (the
  sum over its lexemes of idf * (k1 + 1), lexical.py), [0, 1): a passage
  sharing only a common word of the query scores little, even when it is
  the best match there is;
- hybrid (both legs, the default): ``w * cosine + (1 - w) * normalised
  BM25``, ``w`` the weight of :mod:`retrieval.search.fusion`. A passage's
  score depends only on the query, the passage and the workspace, not on which candidate list found
  it, so the per-resource picks are scored on the same scale as the rest.
  With the lexical leg alone, a named resource without any passage sharing
  a lexeme with the query is represented by its first passages, score 0.

Each leg returns its ``CANDIDATES`` best (plus, for named resources, the
``PER_RESOURCE_CANDIDATES`` best within each); every candidate is scored by
both legs and the best by fused score win. With both legs on, that is one
SQL statement (:mod:`retrieval.search.hybrid`); a single leg runs its own
statements and the choice is made here (``_select``).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections, transaction
from django.db.backends.utils import CursorWrapper

from daneshyar import timing
from retrieval.filters import OPEN, Access
from retrieval.models import Passage
from retrieval.search import dense, lexical, replica
from retrieval.search.fusion import dense_weight
from retrieval.search.hybrid import HybridQuery, hybrid_search
from retrieval.search.narrowing import narrowed
from retrieval.search.plan import Legs, Plan, search_plan
from retrieval.search.stats import workspace_stats
from workspaces.models import Workspace

# Depth of each leg's candidate list when both legs run (bench/retrieval_quality).
CANDIDATES = 50
PER_RESOURCE_CANDIDATES = 10


@dataclass(frozen=True)
class ScoredPassage:
    passage_id: uuid.UUID
    resource_id: uuid.UUID
    resource_title: str
    text: str
    score: float
    rank: int
    ordinal: int
    page: int | None
    # Each leg's own score, for whoever shows how the fused score came about
    # (the curation console): the cosine similarity, and BM25 divided by what
    # the query could score at most (0 when the passage shares no lexeme with it).
    # None when that leg is off.
    dense_score: float | None = None
    lexical_score: float | None = None
    # The passage's language, detected at ingestion (Passage.language).
    language: str = "und"
    # Where it sits on its page (Passage.bbox): [x0, y0, x1, y1], 0 to 1.
    bbox: list[float] | None = None


class CandidateScores(dict[uuid.UUID, float]):
    """The fused score of every candidate, with each leg's own scores beside it."""

    def __init__(
        self,
        fused: dict[uuid.UUID, float],
        *,
        dense: dict[uuid.UUID, float] | None = None,
        lexical: dict[uuid.UUID, float] | None = None,
    ):
        super().__init__(fused)
        self.dense = dense
        self.lexical = lexical


def search(
    *,
    workspace: Workspace,
    query: str,
    resource_ids: Sequence[uuid.UUID] | None = None,
    top_k: int | None = None,
    legs: Legs | None = None,
    access: Access = OPEN,
) -> list[ScoredPassage]:
    """The passages to show the model for ``query``, best first (rules above).

    ``top_k`` overrides the workspace's ``top_k`` (or ``widened_top_k`` with
    ``resource_ids``); ``legs`` overrides RETRIEVAL_DENSE/RETRIEVAL_LEXICAL;
    ``access``: what the caller may read (everything by default).
    """
    plan = search_plan(
        workspace=workspace,
        query=query,
        resource_ids=resource_ids,
        top_k=top_k,
        legs=legs or Legs.configured(),
        access=access,
    )
    if plan is None:
        return []
    # On the read replica when one is configured and current (replica.py).
    with timing.phase("search"):
        alias = replica.search_alias()
        try:
            return _search_on(alias, plan)
        except DatabaseError as error:
            if alias == DEFAULT_DB_ALIAS:
                raise
            replica.replica_failed(error)
            return _search_on(DEFAULT_DB_ALIAS, plan)


def _search_on(alias: str, plan: Plan) -> list[ScoredPassage]:
    with transaction.atomic(using=alias), connections[alias].cursor() as cursor:
        if plan.legs.dense:
            narrowing = narrowed(cursor, workspace_id=plan.workspace_id, access=plan.access)
            if narrowing is None:
                return []
            plan = replace(plan, access=narrowing.access, exact=narrowing.exact)
        if plan.legs.dense and plan.legs.lexical:
            return _hybrid(cursor, plan)
        scores = _scores(cursor, plan)
        # Titles and texts from the same snapshot as the scores.
        return _select(scores, k=plan.k, named=plan.named, per_resource_k=plan.per_resource_k, using=alias)


def _hybrid(cursor: CursorWrapper, plan: Plan) -> list[ScoredPassage]:
    """Both legs, the fusion and the choice in one statement (hybrid.py)."""
    rows = hybrid_search(
        cursor,
        HybridQuery(
            workspace_id=plan.workspace_id,
            model=plan.model,
            query=plan.query,
            vector=plan.vector,
            k=plan.k,
            named=plan.named,
            per_resource_k=plan.per_resource_k,
            limit=max(plan.k, CANDIDATES),
            per_resource=max(plan.per_resource_k, PER_RESOURCE_CANDIDATES),
            dense_weight=dense_weight(plan.model),
            access=plan.access,
            exact=plan.exact,
        ),
    )
    return [
        ScoredPassage(
            passage_id=row.passage_id,
            resource_id=row.resource_id,
            resource_title=row.resource_title,
            text=row.text,
            score=row.score,
            rank=rank,
            ordinal=row.ordinal,
            page=row.page,
            dense_score=row.dense_score,
            lexical_score=row.lexical_score,
            language=row.language,
            bbox=row.bbox,
        )
        for rank, row in enumerate(rows, start=1)
    ]


def _scores(cursor: CursorWrapper, plan: Plan) -> CandidateScores:
    """Score of every candidate passage of the one leg that is on."""
    workspace_id, model, vector, named = plan.workspace_id, plan.model, plan.vector, plan.named
    k, per_resource_k, access = plan.k, plan.per_resource_k, plan.access
    if plan.legs.dense:
        passages = workspace_stats(cursor, workspace_id=workspace_id).passages
        exact = plan.exact or passages <= dense.EXACT_MAX_PASSAGES
        similarity = dense.nearest(
            cursor, workspace_id=workspace_id, model=model, vector=vector, limit=k, exact=exact, access=access
        )
        if named:
            similarity.update(
                dense.nearest_per_resource(
                    cursor,
                    workspace_id=workspace_id,
                    model=model,
                    resource_ids=named,
                    vector=vector,
                    limit=per_resource_k,
                    access=access,
                )
            )
        return CandidateScores(similarity, dense=similarity)
    lexemes = lexical.query_frequencies(cursor, workspace_id=workspace_id, text=plan.query)
    found = lexical.bm25(
        cursor,
        workspace_id=workspace_id,
        model=model,
        lexemes=lexemes,
        limit=k,
        named=(named, per_resource_k),
        access=access,
    )
    normalised = found.normalised()
    if named:
        for pid in lexical.first_passages(
            cursor,
            workspace_id=workspace_id,
            model=model,
            resource_ids=named,
            limit=per_resource_k,
            access=access,
        ):
            normalised.setdefault(pid, 0.0)
    return CandidateScores(normalised, lexical=normalised)


def _select(
    scores: CandidateScores, *, k: int, named: Sequence[uuid.UUID], per_resource_k: int, using: str
) -> list[ScoredPassage]:
    # Best first; ties broken by id so that equal scores give a stable order.
    ordered = sorted(scores, key=lambda pid: (-scores[pid], str(pid)))
    chosen = ordered[:k]
    if named:
        taken = set(chosen)
        wanted = set(named)
        owner = dict(
            Passage.objects.using(using)
            .filter(id__in=ordered, resource_id__in=wanted)
            .values_list("id", "resource_id")
        )
        per_resource: dict[uuid.UUID, int] = {}
        for pid in ordered:
            resource_id = owner.get(pid)
            if resource_id is None or per_resource.get(resource_id, 0) >= per_resource_k:
                continue
            per_resource[resource_id] = per_resource.get(resource_id, 0) + 1
            if pid not in taken:
                chosen.append(pid)
                taken.add(pid)
        chosen.sort(key=lambda pid: (-scores[pid], str(pid)))
    # Text and titles only for what is returned, not for every candidate.
    rows = {
        p.id: p
        for p in Passage.objects.using(using)
        .filter(id__in=chosen)
        .select_related("resource")
        .only("id", "resource_id", "resource__title", "text", "ordinal", "page", "bbox", "language")
    }
    chosen = [pid for pid in chosen if pid in rows]
    return [
        ScoredPassage(
            passage_id=pid,
            resource_id=rows[pid].resource_id,
            resource_title=rows[pid].resource.title,
            text=rows[pid].text,
            score=scores[pid],
            rank=rank,
            ordinal=rows[pid].ordinal,
            page=rows[pid].page,
            dense_score=scores.dense[pid] if scores.dense is not None else None,
            lexical_score=scores.lexical[pid] if scores.lexical is not None else None,
            language=rows[pid].language,
            bbox=rows[pid].bbox,
        )
        for rank, pid in enumerate(chosen, start=1)
    ]
