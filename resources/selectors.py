"""Reads for resources. Every query starts from the workspace."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from django.db.models import Expression, Q, QuerySet

from daneshyar.api import uuid_or_404
from daneshyar.exceptions import NotFound
from resources.models import Resource, ResourceStatus
from resources.titles import ELLIPSIS
from workspaces.models import Workspace


def resource_list(
    *, workspace: Workspace, status: str | None = None, external_id: str | None = None
) -> QuerySet[Resource]:
    queryset = Resource.objects.filter(workspace=workspace)
    if status:
        queryset = queryset.filter(status=status)
    if external_id:
        queryset = queryset.filter(external_id=external_id)
    return queryset


def resource_get(*, workspace: Workspace, resource_id: uuid.UUID | str) -> Resource:
    """The resource, if it belongs to ``workspace``; otherwise 404."""
    resource_uuid = uuid_or_404(resource_id)
    try:
        return Resource.objects.get(workspace=workspace, id=resource_uuid)
    except Resource.DoesNotExist:
        raise NotFound() from None


def ready_resources_exist(*, workspace: Workspace) -> bool:
    """Whether anything in the workspace can be retrieved (else a turn is general knowledge)."""
    return Resource.objects.filter(workspace=workspace, status=ResourceStatus.READY).exists()


def ready_resources_labelled(
    *, workspace: Workspace, labels: Sequence[str], readable: Expression | None = None
) -> dict[str, uuid.UUID]:
    """The ready resource each label names, for the labels that name exactly
    one: its title (case and spacing aside), or the start of it for a label
    cut with an ellipsis (:func:`resources.titles.shorten`). One query.

    ``readable``: a boolean condition on the resource (who may read what,
    retrieval/filters.py): only those are named, and only among those must
    a label name one."""
    wanted = [label for label in labels if 0 < len(label) <= MAX_LABEL_CHARS]
    if not wanted:
        return {}
    condition = Q()
    for label in wanted:
        stem = _stem(label)
        if stem is None:
            condition |= Q(title__iexact=label)
        elif len(stem) >= MIN_STEM_CHARS:
            condition |= Q(title__istartswith=stem)
    if not condition:
        return {}
    queryset = Resource.objects.filter(condition, workspace=workspace, status=ResourceStatus.READY)
    if readable is not None:
        queryset = queryset.filter(readable)
    rows = queryset.order_by().values_list("id", "title")[:MAX_LABELLED_ROWS]
    titles = [(resource_id, " ".join(title.split()).casefold()) for resource_id, title in rows]
    found: dict[str, uuid.UUID] = {}
    for label in wanted:
        stem = _stem(label)
        folded = (stem if stem is not None else label).casefold()
        ids = {
            resource_id
            for resource_id, title in titles
            if (title.startswith(folded) if stem is not None else title == " ".join(folded.split()))
        }
        if len(ids) == 1:
            found[label] = ids.pop()
    return found


# A label longer than a form's option may be is no label; a cut label names
# titles by a start at least this long (a short start would read many rows).
MAX_LABEL_CHARS = 200
MIN_STEM_CHARS = 20
# Rows read at most for one set of labels (more only when starts are shared: then no label is one title's).
MAX_LABELLED_ROWS = 200


def _stem(label: str) -> str | None:
    """What a cut label keeps of its title (``None``: the label was not cut)."""
    if not label.endswith(ELLIPSIS):
        return None
    return " ".join(label[: -len(ELLIPSIS)].split())


def ingestion_waiting() -> bool:
    """Whether any resource, of any workspace, is pending or being ingested
    (one indexed lookup): background work yields to ingestion."""
    return Resource.objects.filter(status__in=[ResourceStatus.PENDING, ResourceStatus.PROCESSING]).exists()
