"""Emitting an event: a delivery row per endpoint that takes it, written in
the caller's transaction (a transactional outbox: the event exists if and
only if the change it reports committed), queued when that commits.

Called from where the change happens (resources/ingestion/write.py,
resources/services.py, chat/services/feedback.py). It never fails nor slows
the caller's work beyond one query and, when some endpoint takes the event,
one insert: no receiver is contacted here.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone

from daneshyar.api import timestamp
from workspaces.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from workspaces.tasks import webhook_deliveries_enqueue_on_commit

logger = logging.getLogger(__name__)


def event_id_new() -> str:
    return "msg_" + uuid.uuid4().hex


def webhook_event_emit(
    *, workspace_id: uuid.UUID, event_type: WebhookEvent, subject_id: str, data: dict[str, Any]
) -> int:
    """Outbox rows for ``event_type`` on every enabled endpoint of the
    workspace that takes it; the number written. Deliveries about one
    ``subject_id`` reach each endpoint in the order they were emitted."""
    return webhook_events_emit(workspace_id=workspace_id, events=[(event_type, subject_id, data)])


def webhook_events_emit(
    *, workspace_id: uuid.UUID, events: Iterable[tuple[WebhookEvent, str, dict[str, Any]]]
) -> int:
    """:func:`webhook_event_emit` for many events of one workspace (a batch)."""
    try:
        endpoints = list(WebhookEndpoint.objects.filter(workspace_id=workspace_id, enabled=True))
        if not endpoints:
            return 0
        rows = []
        for event_type, subject_id, data in events:
            now = timezone.now()
            payload = {"type": str(event_type), "timestamp": timestamp(now), "data": data}
            event_id = event_id_new()
            rows += [
                WebhookDelivery(
                    endpoint=endpoint,
                    event_type=event_type,
                    event_id=event_id,
                    payload=payload,
                    subject_id=subject_id,
                    next_attempt_at=now,
                )
                for endpoint in endpoints
                if endpoint.receives(event_type)
            ]
        if not rows:
            return 0
        with transaction.atomic():  # a savepoint: a failure here leaves the caller's work whole
            created = WebhookDelivery.objects.bulk_create(rows)
        webhook_deliveries_enqueue_on_commit([row.pk for row in created])
        return len(created)
    except Exception:
        logger.exception("webhook events of workspace %s could not be recorded", workspace_id)
        return 0


def resource_event_data(resource: Any) -> dict[str, Any]:
    """A resource event's ``data`` (typed loosely: resources sit above this app)."""
    return {
        "workspace_id": str(resource.workspace_id),
        "resource_id": str(resource.pk),
        "title": resource.title,
        "status": str(resource.status),
        "error_code": resource.error_code or None,
        "passage_count": resource.passage_count,
    }


def resources_ready_emit(resources: Sequence[Any]) -> None:
    """``resource.ready`` for each, in the transaction that made them ready
    (resources/ingestion/write.py; a batch may span workspaces)."""
    by_workspace: dict[uuid.UUID, list[Any]] = {}
    for resource in resources:
        by_workspace.setdefault(resource.workspace_id, []).append(resource)
    for workspace_id, group in by_workspace.items():
        webhook_events_emit(
            workspace_id=workspace_id,
            events=[(WebhookEvent.RESOURCE_READY, str(r.pk), resource_event_data(r)) for r in group],
        )


def resource_failed_emit(resource: Any) -> None:
    """``resource.failed``, in the transaction that failed it."""
    webhook_event_emit(
        workspace_id=resource.workspace_id,
        event_type=WebhookEvent.RESOURCE_FAILED,
        subject_id=str(resource.pk),
        data={**resource_event_data(resource), "error_message": resource.error_message},
    )


def resource_deleted_emit(resource: Any) -> None:
    """``resource.deleted``, in the transaction that deleted it."""
    webhook_event_emit(
        workspace_id=resource.workspace_id,
        event_type=WebhookEvent.RESOURCE_DELETED,
        subject_id=str(resource.pk),
        data={**resource_event_data(resource), "status": "deleted"},
    )
