"""Emitting an event: a delivery row per endpoint that takes it, written in
the caller's transaction (a transactional outbox: the event exists if and
only if the change it reports committed), queued when that commits.

The transport only: an event is its type, its subject (deliveries about one
subject reach an endpoint in order) and its payload, which the app whose
data it is defines — a frozen dataclass per event type (resources/events.py,
resources/sources/events.py, chat/services/feedback.py) — and this module
serialises as the body's ``data``. It never fails nor slows the caller's
work beyond one query and, when some endpoint takes the event, one insert:
no receiver is contacted here.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Protocol, TypeAlias

from django.db import transaction
from django.utils import timezone

from daneshyar.api import timestamp
from workspaces.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from workspaces.tasks import webhook_deliveries_enqueue_on_commit

logger = logging.getLogger(__name__)


class Payload(Protocol):
    """An event's ``data``, typed by the app that emits it: a frozen
    dataclass whose fields are JSON values."""

    __dataclass_fields__: ClassVar[dict[str, Any]]


# The payload of one event; a plain mapping is taken as it is.
Data: TypeAlias = Payload | Mapping[str, Any]


def payload_data(data: Data) -> dict[str, Any]:
    """The JSON object a payload is posted as."""
    if dataclasses.is_dataclass(data) and not isinstance(data, type):
        return dataclasses.asdict(data)
    return dict(data)  # type: ignore[arg-type]


def event_id_new() -> str:
    return "msg_" + uuid.uuid4().hex


def webhook_event_emit(
    *, workspace_id: uuid.UUID, event_type: WebhookEvent, subject_id: str, data: Data
) -> int:
    """Outbox rows for ``event_type`` on every enabled endpoint of the
    workspace that takes it; the number written. Deliveries about one
    ``subject_id`` reach each endpoint in the order they were emitted."""
    return webhook_events_emit(workspace_id=workspace_id, events=[(event_type, subject_id, data)])


def _rows(
    endpoints: list[WebhookEndpoint], event_type: WebhookEvent, subject_id: str, data: Data
) -> list[WebhookDelivery]:
    now = timezone.now()
    payload = {"type": str(event_type), "timestamp": timestamp(now), "data": payload_data(data)}
    event_id = event_id_new()
    return [
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


def webhook_events_emit(*, workspace_id: uuid.UUID, events: Iterable[tuple[WebhookEvent, str, Data]]) -> int:
    """:func:`webhook_event_emit` for many events of one workspace (a batch)."""
    try:
        endpoints = list(WebhookEndpoint.objects.filter(workspace_id=workspace_id, enabled=True))
        if not endpoints:
            return 0
        rows = [row for event in events for row in _rows(endpoints, *event)]
        if not rows:
            return 0
        with transaction.atomic():  # a savepoint: a failure here leaves the caller's work whole
            created = WebhookDelivery.objects.bulk_create(rows)
        webhook_deliveries_enqueue_on_commit([row.pk for row in created])
        return len(created)
    except Exception:
        logger.exception("webhook events of workspace %s could not be recorded", workspace_id)
        return 0
