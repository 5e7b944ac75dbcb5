"""The stale sweep: ingestions whose heartbeat stopped (a crashed or
restarted worker, a lost message) are queued again, or failed when out of
attempts. Beat runs it every INGEST_SWEEP_INTERVAL_SECONDS."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from resources.ingestion.outcome import max_attempts, worker_lost_message
from resources.ingestion.write import resource_fail
from resources.models import Resource, ResourceStatus

logger = logging.getLogger(__name__)

UNFINISHED = (ResourceStatus.PENDING, ResourceStatus.PROCESSING)


def resources_sweep_stale(
    *,
    requeue: Callable[[uuid.UUID], None],
    stale_after: timedelta | None = None,
    limit: int = 500,
) -> int:
    """Re-queue ingestions whose heartbeat stopped (a crashed or restarted
    worker, a lost message); fail those out of attempts. Returns how many
    were touched.

    ``requeue`` is called inside the transaction that refreshes the row's
    heartbeat (the task module passes an on-commit enqueue).
    """
    if stale_after is None:
        stale_after = timedelta(seconds=settings.INGEST_STALE_AFTER_SECONDS)
    now = timezone.now()
    cutoff = now - stale_after
    stale = Q(ingest_heartbeat_at__lt=cutoff) | Q(
        status__in=UNFINISHED, ingest_heartbeat_at__isnull=True, status_changed_at__lt=cutoff
    )
    ids = list(
        Resource.objects.filter(stale).order_by("status_changed_at").values_list("id", flat=True)[:limit]
    )
    touched = sum(_sweep_one(resource_id, stale=stale, now=now, requeue=requeue) for resource_id in ids)
    if touched:
        logger.info("sweep re-queued or failed %d stale ingestion(s)", touched)
    return touched


def _sweep_one(
    resource_id: uuid.UUID, *, stale: Q, now: datetime, requeue: Callable[[uuid.UUID], None]
) -> bool:
    """Re-queue or fail one stale resource; ``False`` if it is not stale
    after all (a worker holds its row right now, or it moved on)."""
    exhausted = 0
    with transaction.atomic():
        # Skip a row a worker holds right now: it is alive after all.
        resource = Resource.objects.select_for_update(skip_locked=True).filter(stale, pk=resource_id).first()
        if resource is None:
            return False
        if resource.attempts >= max_attempts():
            exhausted = resource.attempts
        else:
            # Back to pending: no attempt holds it any more (its worker
            # died or stalled), so the re-queued task claims it.
            resource.ingest_heartbeat_at = now
            fields = ["ingest_heartbeat_at", "updated_at"]
            if resource.status == ResourceStatus.PROCESSING:
                resource.status = ResourceStatus.PENDING
                resource.status_changed_at = now
                fields += ["status", "status_changed_at"]
            resource.save(update_fields=fields)
            requeue(resource.id)
    if exhausted:
        resource_fail(resource_id=resource_id, code="worker_lost", message=worker_lost_message(exhausted))
    return True
