"""Posting deliveries: one attempt, the retries, the order per subject.

A delivery is claimed in a short transaction (its attempt counted, and
``next_attempt_at`` moved past the attempt's deadline, so the sweep takes it
again only if this worker is lost), posted with no transaction open, then
its outcome recorded. A 2xx answer is ``delivered``; anything else (another
status, a refused address, a timeout, a connection error) is retried after
``settings.WEBHOOK_RETRY_DELAYS`` and ends ``failed`` when they run out. A delivery waits
while an earlier one of the same endpoint and subject is pending; when that
one ends, the next is queued.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import uuid
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from daneshyar.outbound import OutboundFailed, OutboundSession, UnsafeUrl
from workspaces.models import DeliveryStatus, WebhookDelivery
from workspaces.webhooks import signing

logger = logging.getLogger(__name__)


# A claimed attempt is taken again by the sweep after this (its worker was lost).
CLAIM_MARGIN_SECONDS = 60
SWEEP_BATCH = 500
# What is read of a receiver's answer: enough to see an error, never a large body.
MAX_READ_BYTES = 4096
USER_AGENT = "Daneshyar-Webhooks/1"


def retry_delays() -> tuple[int, ...]:
    """The wait before each retry (daneshyar/config/webhooks.py)."""
    return tuple(settings.WEBHOOK_RETRY_DELAYS)


def max_attempts() -> int:
    """The first attempt and one per retry delay; then ``failed``."""
    return len(retry_delays()) + 1


@dataclass(frozen=True)
class Claimed:
    delivery_id: uuid.UUID
    url: str
    secret: str | None
    event_id: str
    body: bytes
    enabled: bool


def _earlier_pending(delivery: WebhookDelivery) -> bool:
    if not delivery.subject_id:
        return False
    return (
        WebhookDelivery.objects.filter(
            endpoint_id=delivery.endpoint_id,
            subject_id=delivery.subject_id,
            status=DeliveryStatus.PENDING,
            created_at__lt=delivery.created_at,
        )
        .exclude(pk=delivery.pk)
        .exists()
    )


def _claim(delivery_id: uuid.UUID, now: dt.datetime) -> Claimed | None:
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("endpoint")
            .filter(pk=delivery_id, status=DeliveryStatus.PENDING)
            .first()
        )
        if delivery is None or (delivery.next_attempt_at is not None and delivery.next_attempt_at > now):
            return None
        if _earlier_pending(delivery):
            return None  # queued again when the earlier one ends
        delivery.attempts += 1
        delivery.last_attempt_at = now
        delivery.next_attempt_at = now + dt.timedelta(
            seconds=settings.WEBHOOK_TIMEOUT_SECONDS + CLAIM_MARGIN_SECONDS
        )
        delivery.save(update_fields=["attempts", "last_attempt_at", "next_attempt_at", "updated_at"])
        endpoint = delivery.endpoint
        return Claimed(
            delivery_id=delivery.pk,
            url=endpoint.url,
            secret=signing.secret_decrypt(endpoint.secret),
            event_id=delivery.event_id,
            body=json.dumps(delivery.payload, separators=(",", ":"), ensure_ascii=False).encode(),
            enabled=endpoint.enabled,
        )


def _attempt(claimed: Claimed) -> tuple[int | None, str]:
    """The status code and an error ("" when delivered)."""
    if not claimed.enabled:
        return None, "The endpoint is disabled."
    if claimed.secret is None:
        return None, "The endpoint's secret cannot be read (API_KEY_HASH_SECRET changed): rotate it."
    headers = signing.signed_headers(
        secret=claimed.secret,
        message_id=claimed.event_id,
        timestamp=int(timezone.now().timestamp()),
        body=claimed.body,
    )
    headers["Content-Type"] = "application/json"
    # One deadline for the attempt, the answer read included; a redirect is an
    # answer (never followed).
    session = OutboundSession(timeout=float(settings.WEBHOOK_TIMEOUT_SECONDS), user_agent=USER_AGENT)
    try:
        status = session.post(
            claimed.url, body=claimed.body, headers=headers, max_bytes=MAX_READ_BYTES
        ).status
    except UnsafeUrl as exc:
        return None, str(exc)
    except OutboundFailed as exc:
        return None, f"{type(exc).__name__}: {exc}"[:500]
    if 200 <= status < 300:
        return status, ""
    return status, f"The receiver answered {status}."


def _record(delivery_id: uuid.UUID, status: int | None, error: str) -> WebhookDelivery | None:
    now = timezone.now()
    with transaction.atomic():
        delivery = WebhookDelivery.objects.select_for_update().filter(pk=delivery_id).first()
        if delivery is None:
            return None
        delivery.last_status_code = status
        delivery.last_error = error[:500]
        if not error:
            delivery.status = DeliveryStatus.DELIVERED
            delivery.delivered_at = now
            delivery.next_attempt_at = None
        elif delivery.attempts >= max_attempts():
            delivery.status = DeliveryStatus.FAILED
            delivery.next_attempt_at = None
        else:
            delays = retry_delays()
            wait = delays[min(delivery.attempts, len(delays)) - 1]
            delivery.next_attempt_at = now + dt.timedelta(seconds=wait)
        delivery.save()
    return delivery


def next_in_order(delivery: WebhookDelivery) -> uuid.UUID | None:
    """The pending delivery of the same endpoint and subject that waited for this one."""
    if not delivery.subject_id:
        return None
    found = (
        WebhookDelivery.objects.filter(
            endpoint_id=delivery.endpoint_id, subject_id=delivery.subject_id, status=DeliveryStatus.PENDING
        )
        .order_by("created_at", "id")
        .values_list("id", flat=True)
        .first()
    )
    return found


def delivery_attempt(*, delivery_id: uuid.UUID) -> uuid.UUID | None:
    """Post one delivery if it is due and first in its order; safe to run twice.
    Returns the delivery to queue next (the one that waited for this), if any."""
    claimed = _claim(delivery_id, timezone.now())
    if claimed is None:
        return None
    status, error = _attempt(claimed)
    if error:
        logger.info("webhook delivery %s failed: %s", delivery_id, error)
    delivery = _record(delivery_id, status, error)
    if delivery is None or delivery.status == DeliveryStatus.PENDING:
        return None
    return next_in_order(delivery)


def deliveries_due(*, now: dt.datetime | None = None) -> list[uuid.UUID]:
    """Pending deliveries whose time has come, oldest first (the sweep),
    less those waiting for an earlier one about the same subject: they are
    queued when it ends, and would otherwise fill every batch while it
    waits for its retry (a receiver down for hours), starving the rest."""
    now = now or timezone.now()
    earlier = WebhookDelivery.objects.filter(
        endpoint_id=OuterRef("endpoint_id"),
        subject_id=OuterRef("subject_id"),
        status=DeliveryStatus.PENDING,
        created_at__lt=OuterRef("created_at"),
    )
    return list(
        WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now)
        .exclude(Q(subject_id__gt="") & Exists(earlier))
        .order_by("created_at", "id")
        .values_list("id", flat=True)[:SWEEP_BATCH]
    )
