"""Reads of retrieval's own data (passages). Search is in ``retrieval.search``."""

from __future__ import annotations

from django.db.models import QuerySet

from resources.models import Resource
from retrieval.models import Passage


def passage_list(*, resource: Resource) -> QuerySet[Passage]:
    """The resource's passages, without their vectors; callers order them (by ordinal)."""
    return Passage.objects.filter(workspace_id=resource.workspace_id, resource=resource).defer("embedding")
