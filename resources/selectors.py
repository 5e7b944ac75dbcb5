"""Reads for resources. Every query starts from the workspace."""

from __future__ import annotations

import uuid

from django.db.models import QuerySet

from daneshyar.api import uuid_or_404
from daneshyar.exceptions import NotFound
from resources.models import Resource, ResourceStatus
from workspaces.models import Workspace


def resource_list(*, workspace: Workspace, status: str | None = None) -> QuerySet[Resource]:
    queryset = Resource.objects.filter(workspace=workspace)
    if status:
        queryset = queryset.filter(status=status)
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


def ready_resource_titled(*, workspace: Workspace, title: str) -> uuid.UUID | None:
    """The ready resource of the workspace with this title (case-insensitive), if exactly one has it."""
    if not title or len(title) > 500:
        return None
    ids = list(
        Resource.objects.filter(workspace=workspace, status=ResourceStatus.READY, title__iexact=title)
        .order_by()
        .values_list("id", flat=True)[:2]
    )
    return ids[0] if len(ids) == 1 else None


def ingestion_waiting() -> bool:
    """Whether any resource, of any workspace, is pending or being ingested
    (one indexed lookup): background work yields to ingestion."""
    return Resource.objects.filter(status__in=[ResourceStatus.PENDING, ResourceStatus.PROCESSING]).exists()
