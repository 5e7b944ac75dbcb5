"""Reads for resources. Every query starts from the workspace."""

from __future__ import annotations

import uuid

from django.db.models import QuerySet

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
    try:
        resource_uuid = uuid.UUID(str(resource_id))
    except ValueError:
        raise NotFound() from None
    try:
        return Resource.objects.get(workspace=workspace, id=resource_uuid)
    except Resource.DoesNotExist:
        raise NotFound() from None


def ready_resources_exist(*, workspace: Workspace) -> bool:
    """Whether anything in the workspace can be retrieved (else a turn is general knowledge)."""
    return Resource.objects.filter(workspace=workspace, status=ResourceStatus.READY).exists()
