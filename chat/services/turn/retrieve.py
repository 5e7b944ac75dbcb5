"""A turn's retrieval: the passages its prompt may cite, found with the
conversation (``followup_search.py``)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace

from chat.backends import BaseGenerativeBackend
from chat.services.turn.followup_search import (
    RetrievalQuery,
    followup_search,
    needs_context,
    question_query,
    retrieval_queries,
)
from chat.services.turn.history import TurnContext
from chat.services.turn.rewrite import query_rewrite
from daneshyar import background, timing
from retrieval.embeddings import embed_ahead
from retrieval.filters import OPEN, Access
from retrieval.search import Legs, ScoredPassage, search
from workspaces.models import Workspace


@dataclass(frozen=True)
class Retrieval:
    passages: list[ScoredPassage]
    queries: list[RetrievalQuery]

    @property
    def scoring_context(self) -> str | None:
        """The question with the conversation, when the turn is a follow-up."""
        return self.queries[1].text if len(self.queries) > 1 else None


def retrieval_ahead(question: str, *, model: str) -> None:
    """Start embedding the turn's first query (the question) on a background
    thread, so that the model (the workspace's, ``model``) runs while the
    question is stored."""
    if Legs.configured().dense:
        embed_ahead([question_query(question).text], side="query", model=model)


def turn_retrieve(
    *,
    workspace: Workspace,
    context: TurnContext,
    resource_ids: Sequence[uuid.UUID],
    rewriter: BaseGenerativeBackend | None = None,
    allowed: Sequence[uuid.UUID] | None = None,
    access: Access = OPEN,
) -> Retrieval:
    """The workspace's passages for the turn's question, best first (widened
    towards ``resource_ids`` when given; only from the chosen document after a
    "which one do you mean?" form; each allowed resource named when
    ``allowed``, an end-user token's resources, is given). Every search is
    confined to what ``access`` may read (the filters, the groups and the
    token's resources, retrieval/filters.py) inside its SQL. ``rewriter``: a
    generative backend that may make a follow-up standalone first."""
    question = context.focus
    language = context.language
    queries = retrieval_queries(question, context.earlier_questions, language=language)
    pending: Future[str | None] | None = None
    if rewriter is not None and needs_context(question, context.earlier_questions, language):
        # The model's call runs while the other queries are searched.
        pending = background.submit(
            query_rewrite, rewriter, question=question, turns=context.turns, language=language
        )

    def rewritten() -> list[RetrievalQuery]:
        if pending is None:
            return []
        with timing.phase("rewrite"):
            rewrite = pending.result()
        later = retrieval_queries(question, context.earlier_questions, rewrite=rewrite, language=language)
        return later[len(queries) :]

    named = list(resource_ids)
    chosen = context.chosen
    if allowed is not None and access.resource_ids is None:
        access = replace(access, resource_ids=tuple(allowed))
    if allowed is not None:
        # A choice outside an end-user token's resources is ignored; without
        # a request-level choice each allowed resource is named, so each is
        # represented (the search reads no other: ``access``).
        chosen = chosen if chosen in allowed else None
        named = named or list(allowed)
    if chosen is not None:
        named = [chosen]
    result = followup_search(
        workspace=workspace,
        queries=queries,
        resource_ids=named,
        cited_resource_ids=context.cited,
        later=rewritten if pending is not None else None,
        access=access,
    )
    passages = result.passages
    if chosen is not None:
        passages = [p for p in passages if p.resource_id == chosen]
    return Retrieval(passages=passages, queries=result.queries)


# How deep the question is searched for the documents a "which one do you
# mean?" form offers: a turn retrieves the workspace's top_k passages (5 by
# default), so seven manuals that answer alike would otherwise offer five.
CANDIDATE_PASSAGES = 60


def candidate_passages(
    workspace: Workspace, context: TurnContext, access: Access = OPEN
) -> list[ScoredPassage]:
    """The question's ``CANDIDATE_PASSAGES`` best passages that ``access``
    may read: where a form finds every document it could offer (decide.py)."""
    return search(workspace=workspace, query=context.focus, top_k=CANDIDATE_PASSAGES, access=access)
