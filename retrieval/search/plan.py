"""What a search will do, settled before any statement runs: which legs
(:class:`Legs`; dense off for a workspace whose model is no longer
loadable), the named resources checked (:func:`named_resources_validate`),
the depth, the workspace's model and the query's vector, embedded (cached)
outside any transaction. :func:`search_plan` makes the :class:`Plan` that
:mod:`retrieval.search.service` runs.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.conf import settings

from daneshyar import timing
from daneshyar.exceptions import ValidationFailed
from resources.models import Resource
from retrieval.embeddings import embed_cached, loadable
from retrieval.filters import OPEN, Access
from retrieval.search import dense
from workspaces.models import Workspace


@dataclass(frozen=True)
class Legs:
    dense: bool
    lexical: bool

    @classmethod
    def configured(cls) -> Legs:
        return cls(dense=settings.RETRIEVAL_DENSE, lexical=settings.RETRIEVAL_LEXICAL)


@dataclass(frozen=True)
class Plan:
    workspace_id: uuid.UUID
    model: str
    query: str
    vector: str
    legs: Legs
    k: int
    named: Sequence[uuid.UUID]
    per_resource_k: int
    access: Access = OPEN
    # Every distance computed, whatever the workspace's size (narrowing.py).
    exact: bool = False


def named_resources_validate(*, workspace: Workspace, resource_ids: Iterable[uuid.UUID]) -> list[uuid.UUID]:
    """The distinct named resources, in order; 400 if one is not in the workspace.

    A resource of another workspace or organization is reported exactly like
    one that does not exist. A named resource that is not ready is valid but
    contributes nothing.
    """
    named = list(dict.fromkeys(resource_ids))
    if not named:
        return []
    known = set(Resource.objects.filter(workspace=workspace, id__in=named).values_list("id", flat=True))
    unknown = [str(r) for r in named if r not in known]
    if unknown:
        raise ValidationFailed(
            "Unknown resource ids.",
            fields={"resource_ids": [f"Unknown resource {r}." for r in unknown]},
        )
    return named


def search_plan(
    *,
    workspace: Workspace,
    query: str,
    resource_ids: Sequence[uuid.UUID] | None,
    top_k: int | None,
    legs: Legs,
    access: Access,
) -> Plan | None:
    """The search :func:`retrieval.search.service.search` was asked for; None
    when ``access`` may read nothing (a token confined to no resources)."""
    if not (legs.dense or legs.lexical):
        raise ValueError("at least one retrieval leg must be on")
    named = named_resources_validate(workspace=workspace, resource_ids=resource_ids or [])
    if access.resource_ids == ():
        return None
    # The workspace's model: its passages' vectors are of it (models.Workspace.embedding_model).
    model = workspace.embedding_model
    if legs.dense and not loadable(model):
        # A custom model no longer configured, until the workspace is
        # embedded again (retrieval/reembedding.py): words only.
        legs = Legs(dense=False, lexical=True)
    # Embed before opening the transaction: no connection work waits on the model.
    with timing.phase("embed"):
        vector = (
            dense.vector_literal(embed_cached([query], side="query", model=model)[0].tolist())
            if legs.dense
            else ""
        )
    return Plan(
        workspace_id=workspace.id,
        model=model,
        query=query,
        vector=vector,
        legs=legs,
        k=top_k or (workspace.widened_top_k if named else workspace.top_k),
        named=named,
        per_resource_k=workspace.per_resource_k,
        access=access,
    )
