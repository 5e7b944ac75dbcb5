"""The one search service, used by chat and by the search endpoint.

Rules (docs/architecture.md, spec "Retrieval for a turn"):
- ``top_k`` closest passages across the workspace's *ready* resources;
- with ``resource_ids``: ``widened_top_k`` closest across the workspace, plus
  the best ``per_resource_k`` of each named resource not already among them.

Score: cosine similarity of the query and passage embeddings, in [-1, 1]
(higher is closer). Results are ordered by score, best first.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from pgvector.django import CosineDistance

from daneshyar.exceptions import ValidationFailed
from resources.models import Resource, ResourceStatus
from retrieval.embeddings import get_embedder
from retrieval.models import Passage
from workspaces.models import Workspace


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


def _ready_passages(workspace: Workspace):  # type: ignore[no-untyped-def]
    return Passage.objects.filter(workspace=workspace, resource__status=ResourceStatus.READY)


def _nearest(queryset, vector: list[float], k: int) -> list[Passage]:  # type: ignore[no-untyped-def]
    return list(
        queryset.annotate(distance=CosineDistance("embedding", vector))
        .select_related("resource")
        .only("id", "resource_id", "resource__title", "text", "ordinal", "page")
        .order_by("distance")[:k]
    )


def search(
    *,
    workspace: Workspace,
    query: str,
    resource_ids: Sequence[uuid.UUID] | None = None,
    top_k: int | None = None,
) -> list[ScoredPassage]:
    named = list(dict.fromkeys(resource_ids or []))
    if named:
        known = set(Resource.objects.filter(workspace=workspace, id__in=named).values_list("id", flat=True))
        unknown = [str(r) for r in named if r not in known]
        if unknown:
            raise ValidationFailed(
                "Unknown resource ids.", fields={"resource_ids": [f"Unknown resource {r}." for r in unknown]}
            )
    k = top_k or (workspace.widened_top_k if named else workspace.top_k)
    vector = get_embedder().embed_query(query)
    with transaction.atomic():
        # Keep scanning the HNSW graph until k rows pass the workspace filter
        # (pgvector >= 0.8); without it a small workspace can get fewer rows.
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        rows = _nearest(_ready_passages(workspace), vector, k)
        seen = {p.id for p in rows}
        for resource_id in named:
            picks = _nearest(
                _ready_passages(workspace).filter(resource_id=resource_id), vector, workspace.per_resource_k
            )
            rows.extend(p for p in picks if p.id not in seen)
            seen.update(p.id for p in picks)
    rows.sort(key=lambda p: p.distance)  # type: ignore[attr-defined]
    return [
        ScoredPassage(
            passage_id=p.id,
            resource_id=p.resource_id,
            resource_title=p.resource.title,
            text=p.text,
            score=1.0 - float(p.distance),  # type: ignore[attr-defined]
            rank=rank,
            ordinal=p.ordinal,
            page=p.page,
        )
        for rank, p in enumerate(rows, start=1)
    ]
