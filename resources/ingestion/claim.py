"""Claiming resources for an attempt, and the heartbeat that holds a claim.

An attempt counts itself on the row and marks the resource ``processing``
(a ready resource stays ready while it is reingested); its
``ingest_heartbeat_at`` then says it is alive. A resource out of attempts is
failed instead of claimed.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from resources.ingestion.outcome import max_attempts, worker_lost_message
from resources.ingestion.write import resource_fail
from resources.models import Resource, ResourceStatus


@dataclass(frozen=True)
class _Exhausted:
    """A named resource found out of attempts: failed after the claim commits."""

    resource_id: uuid.UUID
    attempts: int


def _held(resource: Resource, now: datetime) -> bool:
    """Another attempt is running now: ``processing`` with a live heartbeat.

    A resource is ``processing`` only while an attempt runs; it goes back to
    ``pending`` when the attempt hands it to a retry, and when the sweep
    re-queues it after its heartbeat stopped.
    """
    heartbeat = resource.ingest_heartbeat_at
    stale_after = timedelta(seconds=settings.INGEST_STALE_AFTER_SECONDS)
    live = heartbeat is not None and heartbeat > now - stale_after
    return resource.status == ResourceStatus.PROCESSING and live


def _claim(resource: Resource, now: datetime) -> None:
    resource.attempts += 1
    resource.ingest_heartbeat_at = now
    if resource.status != ResourceStatus.READY:
        resource.status = ResourceStatus.PROCESSING
        resource.status_changed_at = now
    resource.save()


def resource_ingest_claim(*, resource_id: uuid.UUID, take_over: bool = False) -> Resource | None:
    """Start an attempt: count it and mark the resource processing.

    ``None`` when there is nothing to do: the resource is gone, or no
    ingestion is outstanding (a duplicate delivery of a finished task), or
    another attempt holds it (a batch claimed it; ``take_over`` claims it
    anyway, for a redelivered message whose worker died), or it ran out of
    attempts (then it is marked failed).
    """
    claimed = resources_ingest_claim(resource_ids=[resource_id], take_over=take_over)
    return claimed[0] if claimed else None


def resources_ingest_claim(
    *, resource_ids: Sequence[uuid.UUID], fill: int = 0, take_over: bool = False
) -> list[Resource]:
    """Claim the named resources (as :func:`resource_ingest_claim` does each),
    then, if all of them are first attempts, up to ``fill`` more pending
    first attempts, oldest first, that no one else holds. Retries are never
    batched: they run alone, after their backoff, so a document that broke
    its batch once cannot break another."""
    now = timezone.now()
    claimed: list[Resource] = []
    exhausted: list[_Exhausted] = []
    with transaction.atomic():
        # In id order, so that two claims of overlapping batches cannot deadlock.
        named = Resource.objects.select_for_update().filter(pk__in=resource_ids).order_by("pk")
        batchable = True
        for resource in named:
            if resource.ingest_heartbeat_at is None or (_held(resource, now) and not take_over):
                continue
            if resource.attempts >= max_attempts():
                exhausted.append(_Exhausted(resource.pk, resource.attempts))
                continue
            batchable = batchable and resource.attempts == 0
            _claim(resource, now)
            claimed.append(resource)
        if fill > 0 and batchable:
            claimed += _claim_pending(exclude=resource_ids, limit=fill, now=now)
    for item in exhausted:
        resource_fail(
            resource_id=item.resource_id, code="worker_lost", message=worker_lost_message(item.attempts)
        )
    return claimed


def _claim_pending(*, exclude: Sequence[uuid.UUID], limit: int, now: datetime) -> list[Resource]:
    """Up to ``limit`` pending first attempts no one else holds, oldest first."""
    more = (
        Resource.objects.select_for_update(skip_locked=True)
        .filter(status=ResourceStatus.PENDING, attempts=0, ingest_heartbeat_at__isnull=False)
        .exclude(pk__in=exclude)
        .order_by("status_changed_at")[:limit]
    )
    claimed = []
    for resource in more:
        _claim(resource, now)
        claimed.append(resource)
    return claimed


def heartbeat_many(resource_ids: Sequence[uuid.UUID]) -> None:
    """The claimed resources are alive: refresh their heartbeat."""
    Resource.objects.filter(pk__in=resource_ids, ingest_heartbeat_at__isnull=False).update(
        ingest_heartbeat_at=timezone.now()
    )


def heartbeat(resource_id: uuid.UUID) -> None:
    """The claimed resource is alive: refresh its heartbeat."""
    Resource.objects.filter(pk=resource_id, ingest_heartbeat_at__isnull=False).update(
        ingest_heartbeat_at=timezone.now()
    )
