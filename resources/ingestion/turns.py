"""OCR in turns (docs/ocr.md, "In turns"): a document with pages to read by
OCR is read OCR_PAGES_PER_TURN pages per attempt. Each page read is kept
(:class:`~resources.models.OcrScan`, :class:`~resources.models.OcrPage`) as
soon as it is read, so a worker that dies mid-turn loses one page; when the
turn has read its pages the document goes back to the queue, as a first
attempt again (no failure attempt spent), and the fair claim serves other
organizations before its next turn. The last turn parses the document from
the pages kept and the rest as usual; the kept pages go when the ingestion
ends (ready or failed), with the resource, and on a reingest.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterable

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from resources.ingestion.outcome import IngestResult, Requeue
from resources.models import OcrPage, OcrScan, Resource, ResourceStatus
from resources.parsing import Turn
from resources.parsing.ocr import models_for
from resources.parsing.ocr_regions import Region, table_region
from resources.parsing.ocr_tables import Table


def turn_start(resource: Resource, *, language: str | None) -> Turn | None:
    """This attempt's turn of the resource's OCR: the pages earlier turns
    read of these bytes with these models (others are dropped), and the
    seconds they took. ``None`` when OCR_PAGES_PER_TURN is 0 (one turn)."""
    per_turn = int(settings.OCR_PAGES_PER_TURN)
    if per_turn <= 0:
        return None
    models = models_for(language)
    scan = OcrScan.objects.filter(resource_id=resource.pk).first()
    if scan is not None and (scan.sha256 != resource.sha256 or scan.models_used != models):
        scan.delete()
        scan = None
    kept: dict[int, list[Region]] = {}
    parts: dict[int, list[Table | None]] = {}
    if scan is not None:
        pages = OcrPage.objects.filter(scan=scan).values_list("page", "regions", "complete")
        for page, regions, complete in pages:
            if complete:
                kept[page] = [Region.from_stored(region) for region in regions]
            else:
                parts[page] = [Region.from_stored(r).table if r else None for r in regions]
    keep = functools.partial(_keep, resource.pk, resource.sha256, models)
    keep_part = functools.partial(_keep_part, resource.pk, resource.sha256, models)
    return Turn(
        kept=kept,
        spent=scan.seconds if scan else 0.0,
        pages=per_turn,
        keep=keep,
        parts=parts,
        keep_part=keep_part,
    )


def _keep(
    resource_id: uuid.UUID,
    sha256: str,
    models: str,
    page: int,
    regions: list[Region],
    seconds: float,
    pages_total: int | None,
) -> None:
    """Keep one page read now, and count it and its seconds on the scan.
    Nothing when the resource is gone, its bytes replaced or its ingestion
    queued again (a reingest: no attempt counted) meanwhile."""
    with transaction.atomic():
        held = Resource.objects.select_for_update().filter(pk=resource_id, sha256=sha256, attempts__gt=0)
        resource = held.first()
        if resource is None:
            return
        scan, _ = OcrScan.objects.get_or_create(
            resource_id=resource_id, defaults={"sha256": sha256, "models_used": models}
        )
        stored = [region.stored() for region in regions]
        kept, created = OcrPage.objects.get_or_create(scan=scan, page=page, defaults={"regions": stored})
        if not created and not kept.complete:  # its tables were kept by an earlier turn
            OcrPage.objects.filter(pk=kept.pk).update(regions=stored, complete=True)
        if created or not kept.complete:
            OcrScan.objects.filter(pk=scan.pk).update(
                pages_read=F("pages_read") + 1,
                seconds=F("seconds") + seconds,
                pages_total=pages_total,
                updated_at=timezone.now(),
            )


def _keep_part(
    resource_id: uuid.UUID,
    sha256: str,
    models: str,
    page: int,
    tables: list[Table | None],
    seconds: float,
) -> None:
    """Keep the tables read so far of a page the turn ended in, and count
    their seconds on the scan (not the page: it is not read yet). As
    :func:`_keep`, nothing when the resource changed meanwhile."""
    stored = [None if table is None else table_region(table).stored() for table in tables]
    with transaction.atomic():
        held = Resource.objects.select_for_update().filter(pk=resource_id, sha256=sha256, attempts__gt=0)
        if not held.exists():
            return
        scan, _ = OcrScan.objects.get_or_create(
            resource_id=resource_id, defaults={"sha256": sha256, "models_used": models}
        )
        kept, created = OcrPage.objects.get_or_create(
            scan=scan, page=page, defaults={"regions": stored, "complete": False}
        )
        if not created and kept.complete:
            return
        if not created:
            OcrPage.objects.filter(pk=kept.pk).update(regions=stored)
        OcrScan.objects.filter(pk=scan.pk).update(seconds=F("seconds") + seconds, updated_at=timezone.now())


def turn_hand_back(resource_id: uuid.UUID, requeue: Requeue) -> IngestResult:
    """The turn has read its pages: the resource waits for the fair claim
    again, a first attempt (its attempts back to 0: a turn that read pages
    is no failure), ``pending`` unless it is ready (a reingest)."""
    with transaction.atomic():
        resource = Resource.objects.select_for_update().filter(pk=resource_id).first()
        if resource is None or resource.ingest_heartbeat_at is None:
            return IngestResult.SKIPPED
        now = timezone.now()
        resource.attempts = 0
        resource.ingest_heartbeat_at = now
        resource.ingest_retry_at = None
        resource.ingest_claimed_by = ""
        if resource.status == ResourceStatus.PROCESSING:
            resource.status = ResourceStatus.PENDING
            resource.status_changed_at = now
        resource.save()
        requeue(resource_id, 0)
    return IngestResult.CONTINUING


def scans_end(resource_ids: Iterable[uuid.UUID]) -> None:
    """The ingestion of these resources ended (or starts again): their kept pages go."""
    OcrScan.objects.filter(resource_id__in=list(resource_ids)).delete()
