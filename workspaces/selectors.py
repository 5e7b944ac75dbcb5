"""Reads for tenancy. Every tenant boundary goes through these helpers."""

from __future__ import annotations

import uuid

from django.db.models import QuerySet

from daneshyar.api import uuid_or_404
from daneshyar.exceptions import NotFound
from workspaces.models import ApiKey, Workspace


def workspace_list(*, api_key: ApiKey) -> QuerySet[Workspace]:
    queryset = Workspace.objects.filter(organization_id=api_key.organization_id)
    if api_key.allowed_workspace_ids:
        queryset = queryset.filter(id__in=api_key.allowed_workspace_ids)
    return queryset


def workspace_get(*, api_key: ApiKey, workspace_id: uuid.UUID | str) -> Workspace:
    """The workspace, if this key may see it; otherwise 404 as if it did not exist.

    Another organization's workspace and one outside the key's allow-list are
    indistinguishable from a missing one.
    """
    workspace_uuid = uuid_or_404(workspace_id)
    if not api_key.allows_workspace(workspace_uuid):
        raise NotFound()
    try:
        return Workspace.objects.get(id=workspace_uuid, organization_id=api_key.organization_id)
    except Workspace.DoesNotExist:
        raise NotFound() from None
