"""A turn's retrieval: the passages its prompt may cite, found with the
conversation (``contextual.py``)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from chat.backends import BaseBackend
from chat.services.turn.context import TurnContext
from chat.services.turn.contextual import RetrievalQuery, contextual_search, needs_context, retrieval_queries
from chat.services.turn.rewrite import query_rewrite
from retrieval.search import ScoredPassage
from workspaces.models import Workspace


@dataclass(frozen=True)
class Retrieval:
    passages: list[ScoredPassage]
    queries: list[RetrievalQuery]

    @property
    def scoring_context(self) -> str | None:
        """The question with the conversation, when the turn is a follow-up."""
        return self.queries[1].text if len(self.queries) > 1 else None


def turn_retrieve(
    *,
    workspace: Workspace,
    context: TurnContext,
    resource_ids: Sequence[uuid.UUID],
    rewriter: BaseBackend | None = None,
) -> Retrieval:
    """The workspace's passages for the turn's question, best first (only
    from ``resource_ids`` when given; only from the chosen document after a
    "which one do you mean?" form). ``rewriter``: a generative backend that
    may make a follow-up standalone first."""
    question = context.focus
    rewrite = None
    if rewriter is not None and needs_context(question, context.earlier):
        rewrite = query_rewrite(rewriter, question=question, turns=context.turns)
    queries = retrieval_queries(question, context.earlier, rewrite=rewrite)
    named = list(resource_ids)
    # The chosen document narrows the filter; it never widens it (an answer
    # naming a document outside an end-user token's resources is ignored).
    chosen = context.chosen if context.chosen is not None and (not named or context.chosen in named) else None
    if chosen is not None:
        named = [chosen]
    passages = contextual_search(
        workspace=workspace, queries=queries, resource_ids=named, cited_resource_ids=context.cited
    )
    if chosen is not None:
        passages = [p for p in passages if p.resource_id == chosen]
    return Retrieval(passages=passages, queries=queries)
