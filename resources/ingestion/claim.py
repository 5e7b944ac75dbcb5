"""Claiming resources for an attempt, and the heartbeat that holds a claim.

An attempt counts itself on the row and marks the resource ``processing``
(a ready resource stays ready while it is reingested); its
``ingest_heartbeat_at`` then says it is alive. A resource out of attempts is
failed instead of claimed.

First attempts are claimed fairly (:func:`_claim_fair`): a task of the queue
takes the waiting documents of the organization served longest ago, not the
ones its message names, so one organization's backlog of thousands never
holds another's document behind it (docs/ingestion.md, "Fairness").
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from resources.ingestion.outcome import max_attempts, worker_lost_message
from resources.ingestion.write import resource_fail
from resources.models import IngestTurn, OcrScan, Resource, ResourceStatus
from workspaces.models import Organization

# pg_advisory_xact_lock key of the fair claim ("fair" in ASCII): claims take
# turns, so two workers never pick the same organization's turn at once.
_FAIR_CLAIM_LOCK = 0x66616972


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


def _claim(resource: Resource, now: datetime, claimant: str) -> None:
    resource.attempts += 1
    resource.ingest_heartbeat_at = now
    resource.ingest_claimed_by = claimant
    resource.ingest_retry_at = None
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
    *, resource_ids: Sequence[uuid.UUID], fill: int = 0, take_over: bool = False, claimant: str = ""
) -> list[Resource]:
    """Claim the named resources (as :func:`resource_ingest_claim` does each)
    and, with ``fill``, the next work waiting in the database: a retry whose
    backoff is over, alone, or else first attempts by the fair claim, up to
    ``fill`` resources in all (if all those claimed by name are first
    attempts).

    With ``fill`` the named resources that wait for a first attempt are not
    claimed by name: they wait their organization's turn like any other (a
    task's message means "ingest what is next", its ids only that there is
    something). Retries are never batched: they run alone, after their
    backoff (``ingest_retry_at``), so a document that broke its batch once
    cannot break another. ``claimant`` (the task's id) is recorded on each
    claimed row; with ``take_over`` the rows a dead attempt of the same
    claimant held are claimed again too.
    """
    now = timezone.now()
    exhausted: list[_Exhausted] = []
    with transaction.atomic():
        claimed = _claim_named(
            resource_ids, now=now, fill=fill, take_over=take_over, claimant=claimant, exhausted=exhausted
        )
        if fill > len(claimed) and all(r.attempts == 1 for r in claimed):
            retry = None if claimed else _claim_due_retry(now=now, claimant=claimant, exhausted=exhausted)
            claimed += (
                [retry] if retry else _claim_fair(limit=fill - len(claimed), now=now, claimant=claimant)
            )
    for item in exhausted:
        resource_fail(
            resource_id=item.resource_id, code="worker_lost", message=worker_lost_message(item.attempts)
        )
    return claimed


def _claim_named(
    resource_ids: Sequence[uuid.UUID],
    *,
    now: datetime,
    fill: int,
    take_over: bool,
    claimant: str,
    exhausted: list[_Exhausted],
) -> list[Resource]:
    claimed: list[Resource] = []
    for resource in _named(resource_ids, take_over=take_over, claimant=claimant):
        if resource.ingest_heartbeat_at is None or (_held(resource, now) and not take_over):
            continue
        if fill > 0 and _waiting(resource):
            continue  # the fair claim below takes it in its turn
        if resource.attempts >= max_attempts():
            exhausted.append(_Exhausted(resource.pk, resource.attempts))
            continue
        _claim(resource, now, claimant)
        claimed.append(resource)
    return claimed


def _claim_due_retry(*, now: datetime, claimant: str, exhausted: list[_Exhausted]) -> Resource | None:
    """The retry waiting longest past its backoff, if any, claimed alone."""
    due = (
        Resource.objects.select_for_update(skip_locked=True)
        .filter(ingest_retry_at__lte=now, ingest_heartbeat_at__isnull=False)
        .order_by("ingest_retry_at", "pk")
    )
    for resource in due[:10]:
        if resource.attempts >= max_attempts():
            exhausted.append(_Exhausted(resource.pk, resource.attempts))
            continue
        _claim(resource, now, claimant)
        return resource
    return None


def _named(resource_ids: Sequence[uuid.UUID], *, take_over: bool, claimant: str) -> QuerySet[Resource]:
    """The named rows, locked in id order (two claims of overlapping batches
    cannot deadlock); with ``take_over``, also those the claimant held."""
    which = Q(pk__in=resource_ids)
    if take_over and claimant:
        which |= _held_by(claimant)
    return Resource.objects.select_for_update().filter(which).order_by("pk")


def _held_by(claimant: str) -> Q:
    """Rows an attempt of ``claimant`` holds (not those it handed to a retry)."""
    return Q(ingest_claimed_by=claimant, ingest_heartbeat_at__isnull=False) & ~Q(
        status=ResourceStatus.PENDING
    )


def _waiting(resource: Resource) -> bool:
    """Queued for its first attempt, which no one holds."""
    return resource.status == ResourceStatus.PENDING and resource.attempts == 0


def _pending_first_attempts() -> QuerySet[Resource]:
    """Uploads, and reingests of ready or failed documents, that no attempt
    took yet (a claim counts an attempt, so none holds them)."""
    return Resource.objects.filter(attempts=0, ingest_heartbeat_at__isnull=False)


def work_waiting(*, now: datetime) -> bool:
    """Whether a claim would find something now: a first attempt, or a
    retry whose backoff is over."""
    due = Q(ingest_retry_at__lte=now, ingest_heartbeat_at__isnull=False)
    return _pending_first_attempts().exists() or Resource.objects.filter(due).exists()


def next_retry_at() -> datetime | None:
    """When the soonest retry still in its backoff becomes due, if any."""
    waiting = Resource.objects.filter(ingest_retry_at__isnull=False, ingest_heartbeat_at__isnull=False)
    return waiting.order_by("ingest_retry_at").values_list("ingest_retry_at", flat=True).first()


def _claim_fair(*, limit: int, now: datetime, claimant: str) -> list[Resource]:
    """Up to ``limit`` pending first attempts no one else holds: first the
    organization served longest ago (or never), its oldest documents first,
    then the next organization's, and so on. Each organization that got
    documents is marked served now, so the next claim starts with another
    one: one organization's backlog never delays another's document by more
    than the batch that is running."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_FAIR_CLAIM_LOCK])
    waiting = _pending_first_attempts()
    served_at = IngestTurn.objects.filter(organization=OuterRef("pk")).values("served_at")
    turns = (
        Organization.objects.filter(pk__in=waiting.values("workspace__organization_id"))
        .annotate(served_at=Subquery(served_at))
        .order_by(F("served_at").asc(nulls_first=True), "pk")
        .values_list("pk", flat=True)
    )
    claimed: list[Resource] = []
    served: list[uuid.UUID] = []
    # Scans read in turns whose next turn waits: each runs alone, so a batch
    # never holds another document behind a turn of OCR (docs/ocr.md).
    continuing = set(OcrScan.objects.filter(resource__in=waiting).values_list("resource_id", flat=True))
    for organization_id in turns[:limit]:
        rows = (
            waiting.filter(workspace__organization_id=organization_id)
            .select_for_update(skip_locked=True, of=("self",))
            .order_by("status_changed_at", "pk")[: limit - len(claimed)]
        )
        taken, alone = _take(rows, continuing=continuing, batch=claimed, now=now, claimant=claimant)
        if taken:
            served.append(organization_id)
        if alone or len(claimed) >= limit:
            break
    IngestTurn.objects.bulk_create(
        [IngestTurn(organization_id=pk, served_at=now) for pk in served],
        update_conflicts=True,
        unique_fields=["organization"],
        update_fields=["served_at"],
    )
    return claimed


def _take(
    rows: QuerySet[Resource],
    *,
    continuing: set[uuid.UUID],
    batch: list[Resource],
    now: datetime,
    claimant: str,
) -> tuple[int, bool]:
    """Claim ``rows`` into ``batch`` in order, up to a scan's next turn: that
    one alone, in a batch of its own. How many were taken, and whether the
    batch ends here."""
    taken = 0
    for resource in rows:
        if resource.pk in continuing and batch:
            return taken, True
        _claim(resource, now, claimant)
        batch.append(resource)
        taken += 1
        if resource.pk in continuing:
            return taken, True
    return taken, False


def resources_claimed_by(claimant: str) -> list[uuid.UUID]:
    """The resources an attempt of ``claimant`` (a task id) holds now."""
    if not claimant:
        return []
    held = Resource.objects.filter(_held_by(claimant))
    return list(held.order_by("pk").values_list("pk", flat=True))


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
