"""The stale sweep: attempts whose heartbeat stopped (a crashed or restarted
worker) go back to waiting, as a retry due now, or fail when out of
attempts; and while any work waits, a worker is woken (a lost or never-sent
"work is waiting" message loses nothing: the work is in the database).
Beat runs it every INGEST_SWEEP_INTERVAL_SECONDS.

Documents waiting for their first attempt, or for a retry's backoff, are
never stale: waiting is what they do until a claim takes them."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from resources.ingestion.claim import work_waiting
from resources.ingestion.outcome import max_attempts, worker_lost_message
from resources.ingestion.write import resource_fail
from resources.models import Resource, ResourceStatus

logger = logging.getLogger(__name__)

UNFINISHED = (ResourceStatus.PENDING, ResourceStatus.PROCESSING)


def resources_sweep_stale(
    *,
    wake: Callable[[], None],
    stale_after: timedelta | None = None,
    limit: int = 500,
) -> int:
    """Hand attempts whose heartbeat stopped (a crashed or restarted worker)
    back to a retry due now; fail those out of attempts. Returns how many
    were touched. ``wake`` is called once at the end when any work waits
    (the task module's: a "work is waiting" message unless one waits).
    """
    if stale_after is None:
        stale_after = timedelta(seconds=settings.INGEST_STALE_AFTER_SECONDS)
    now = timezone.now()
    cutoff = now - stale_after
    held = Q(ingest_heartbeat_at__lt=cutoff, ingest_retry_at__isnull=True) & ~Q(attempts=0)
    stale = held | Q(status__in=UNFINISHED, ingest_heartbeat_at__isnull=True, status_changed_at__lt=cutoff)
    ids = list(
        Resource.objects.filter(stale).order_by("status_changed_at").values_list("id", flat=True)[:limit]
    )
    touched = sum(_sweep_one(resource_id, stale=stale, now=now) for resource_id in ids)
    if touched:
        logger.info("sweep re-queued or failed %d stale ingestion(s)", touched)
    if work_waiting(now=timezone.now()):
        wake()
    return touched


def _sweep_one(resource_id: uuid.UUID, *, stale: Q, now: datetime) -> bool:
    """Hand one stale resource to a retry due now, or fail it; ``False`` if
    it is not stale after all (a worker holds its row right now, or it
    moved on)."""
    exhausted = 0
    with transaction.atomic():
        # Skip a row a worker holds right now: it is alive after all.
        resource = Resource.objects.select_for_update(skip_locked=True).filter(stale, pk=resource_id).first()
        if resource is None:
            return False
        if resource.attempts >= max_attempts():
            exhausted = resource.attempts
        else:
            # Back to waiting: no attempt holds it any more (its worker
            # died or stalled); the next claim takes it as a retry.
            resource.ingest_heartbeat_at = now
            fields = ["ingest_heartbeat_at", "updated_at"]
            if resource.attempts:
                resource.ingest_retry_at = now
                fields.append("ingest_retry_at")
            if resource.status == ResourceStatus.PROCESSING:
                resource.status = ResourceStatus.PENDING
                resource.status_changed_at = now
                fields += ["status", "status_changed_at"]
            resource.save(update_fields=fields)
    if exhausted:
        resource_fail(resource_id=resource_id, code="worker_lost", message=worker_lost_message(exhausted))
    return True
