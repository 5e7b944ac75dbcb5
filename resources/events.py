"""The webhook events about documents, and their payloads (docs/webhooks.md,
"Events"): this app's data, so defined here; workspaces/webhooks/ only
carries them. Each is emitted in the transaction of the change it reports."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

from resources.models import Resource
from workspaces.models import WebhookEvent
from workspaces.webhooks.events import webhook_event_emit, webhook_events_emit


@dataclass(frozen=True)
class ResourceReady:
    """``resource.ready``: the document's passages are stored."""

    workspace_id: str
    resource_id: str
    title: str
    status: str
    error_code: str | None
    passage_count: int

    @classmethod
    def of(cls, resource: Resource, **fields: Any) -> Self:
        """The payload about ``resource``; ``fields`` adds or overrides."""
        common: dict[str, Any] = {
            "workspace_id": str(resource.workspace_id),
            "resource_id": str(resource.pk),
            "title": resource.title,
            "status": str(resource.status),
            "error_code": resource.error_code or None,
            "passage_count": resource.passage_count,
        }
        return cls(**{**common, **fields})


@dataclass(frozen=True)
class ResourceFailed(ResourceReady):
    """``resource.failed``: the same, with why."""

    error_message: str


@dataclass(frozen=True)
class ResourceDeleted(ResourceReady):
    """``resource.deleted``: the same, ``status`` "deleted"."""


def resources_ready_emit(resources: Sequence[Resource]) -> None:
    """``resource.ready`` for each, in the transaction that made them ready
    (resources/ingestion/write.py; a batch may span workspaces)."""
    by_workspace: dict[uuid.UUID, list[Resource]] = {}
    for resource in resources:
        by_workspace.setdefault(resource.workspace_id, []).append(resource)
    for workspace_id, group in by_workspace.items():
        webhook_events_emit(
            workspace_id=workspace_id,
            events=[(WebhookEvent.RESOURCE_READY, str(r.pk), ResourceReady.of(r)) for r in group],
        )


def resource_failed_emit(resource: Resource) -> None:
    """``resource.failed``, in the transaction that failed it."""
    webhook_event_emit(
        workspace_id=resource.workspace_id,
        event_type=WebhookEvent.RESOURCE_FAILED,
        subject_id=str(resource.pk),
        data=ResourceFailed.of(resource, error_message=resource.error_message),
    )


def resource_deleted_emit(resource: Resource) -> None:
    """``resource.deleted``, in the transaction that deleted it."""
    webhook_event_emit(
        workspace_id=resource.workspace_id,
        event_type=WebhookEvent.RESOURCE_DELETED,
        subject_id=str(resource.pk),
        data=ResourceDeleted.of(resource, status="deleted"),
    )
