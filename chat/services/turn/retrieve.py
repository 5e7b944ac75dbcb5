"""A turn's retrieval: the passages its prompt may cite."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from django.conf import settings

from retrieval.search import ScoredPassage, search
from workspaces.models import Workspace


def turn_retrieve(
    *, workspace: Workspace, question: str, resource_ids: Sequence[uuid.UUID]
) -> list[ScoredPassage]:
    """The workspace's passages for ``question``, best first (only from
    ``resource_ids`` when given). The query is the question alone, cut to
    ``MAX_QUERY_CHARS``."""
    return search(
        workspace=workspace,
        query=question[: settings.MAX_QUERY_CHARS],
        resource_ids=list(resource_ids) or None,
    )
