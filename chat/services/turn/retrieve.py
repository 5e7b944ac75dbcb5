"""A turn's retrieval: the passages its prompt may cite, found with the
conversation (``followup_search.py``)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace

from chat.backends import BaseGenerativeBackend
from chat.services.turn.followup_search import RetrievalQuery, turn_search
from chat.services.turn.history import TurnContext
from retrieval.filters import OPEN, Access
from retrieval.search import ScoredPassage, search
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
    generative backend that may make a follow-up standalone first
    (followup_search.py)."""
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
    result = turn_search(
        workspace=workspace, context=context, resource_ids=named, access=access, rewriter=rewriter
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
