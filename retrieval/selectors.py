"""Reads of retrieval's own data (passages). Search is in ``retrieval.search``."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from django.db.models import QuerySet

from daneshyar.api import uuid_or_404
from daneshyar.exceptions import NotFound
from resources.models import Resource
from retrieval.embeddings import Vector
from retrieval.models import Passage, PassageUnits
from retrieval.unit_vectors import unpack
from workspaces.models import Workspace


def passage_list(*, resource: Resource) -> QuerySet[Passage]:
    """The resource's passages, without their vectors; callers order them (by ordinal)."""
    return Passage.objects.filter(workspace_id=resource.workspace_id, resource=resource).defer("embedding")


def passage_get(*, workspace: Workspace, passage_id: uuid.UUID | str) -> Passage:
    """The passage with its resource, if it is in ``workspace``; otherwise 404."""
    passage_uuid = uuid_or_404(passage_id)
    try:
        return (
            Passage.objects.filter(workspace=workspace, id=passage_uuid)
            .select_related("resource")
            .defer("embedding", "search_vector")
            .get()
        )
    except Passage.DoesNotExist:
        raise NotFound() from None


def passage_unit_vectors(
    *, passage_ids: Sequence[uuid.UUID], model_name: str, dimensions: int
) -> dict[bytes, Vector]:
    """The stored vectors of these passages' answer units that ``model_name``
    made, by their text's digest (retrieval/unit_vectors.py): one query."""
    blobs = (
        PassageUnits.objects.filter(passage_id__in=list(passage_ids), passage__embedding_model=model_name)
        .exclude(vectors=b"")
        .values_list("vectors", flat=True)
    )
    out: dict[bytes, Vector] = {}
    for blob in blobs:
        out.update(unpack(bytes(blob), dimensions=dimensions))
    return out
