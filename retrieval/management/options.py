"""Options the retrieval commands share."""

from __future__ import annotations

import uuid

from django.core.management.base import CommandError

from workspaces.models import Workspace


def workspace_option(value: str | None) -> uuid.UUID | None:
    """``--workspace``: None when not given, else the id of an existing
    workspace (a malformed or unknown id stops the command with its reason)."""
    if not value:
        return None
    try:
        workspace_id = uuid.UUID(value)
    except ValueError:
        raise CommandError(f"--workspace: not a workspace id: {value!r}") from None
    if not Workspace.objects.filter(id=workspace_id).exists():
        raise CommandError(f"--workspace: no workspace {workspace_id}")
    return workspace_id
