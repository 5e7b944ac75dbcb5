"""One sync of a web source: list its pages, fetch and store each, then
delete the documents whose page is gone — unless more than
``max_delete_percent`` of the source's documents would go, or the site did
not answer: then the run is ``failed`` and deletes nothing
(resources/sources/pages.py).

A run is carried out by one worker at a time (:func:`run_claim`). When the
next request to a host must wait longer than SOURCES_INLINE_WAIT_MS (a
robots.txt Crawl-delay), the run saves where it stands
(resources/sources/progress.py), releases its claim and queues its task
again with that countdown: the worker goes on to other work, and the next
delivery resumes the run."""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from daneshyar.outbound import UnsafeUrl
from resources.models import SourceRun, SourceRunStatus
from resources.sources.crawl import Crawler, MustWait, SiteUnavailable
from resources.sources.events import run_event_emit
from resources.sources.pages import GuardTripped, gone_delete, listing_read, pages_sync
from resources.sources.progress import COUNTS, Progress, RunLost
from resources.sources.queue import run_enqueue

logger = logging.getLogger(__name__)

# A countdown's message may arrive a little before the row's ``resume_at``
# (the clocks of two machines); earlier than this, a delivery is a stray copy.
RESUME_EARLY_SECONDS = 2.0


def source_run_execute(run_id: uuid.UUID | str) -> SourceRun | None:
    """Carry out the run (its worker's task), or its next part after a wait;
    None when it is no longer running (done already, or failed by the
    sweep), or when another worker holds it. Safe to call again, and twice
    at once."""
    executor = run_claim(run_id)
    if executor is None:
        logger.info("sync run %s: not running, waiting, or carried out by another worker", run_id)
        return None
    return _execute(run_id, executor)


def run_claim(run_id: uuid.UUID | str) -> uuid.UUID | None:
    """Take the run for this worker: its ``executor``, or None when the run
    is not ``running``, waits for a later countdown, or another worker holds
    it (its heartbeat newer than SOURCES_RUN_STALE_SECONDS). Redis hands an
    unacknowledged task to a second worker after the broker's visibility
    timeout (an hour) while the first may still run it (acks_late): the
    second finds the run held and does nothing; the first, should it lose
    its claim, stops (RunLost). A row, not a session lock: safe behind a
    transaction-pooling PgBouncer."""
    executor = uuid.uuid4()
    now = timezone.now()
    stale = now - timedelta(seconds=settings.SOURCES_RUN_STALE_SECONDS)
    due = now + timedelta(seconds=RESUME_EARLY_SECONDS)
    taken = (
        SourceRun.objects.filter(pk=run_id, status=SourceRunStatus.RUNNING)
        .filter(Q(executor__isnull=True) | Q(heartbeat_at__lt=stale))
        .filter(Q(resume_at__isnull=True) | Q(resume_at__lte=due))
        .update(executor=executor, heartbeat_at=now, resume_at=None)
    )
    return executor if taken else None


def _execute(run_id: uuid.UUID | str, executor: uuid.UUID) -> SourceRun | None:
    run = SourceRun.objects.select_related("source__workspace").filter(pk=run_id).first()
    if run is None or run.status != SourceRunStatus.RUNNING:
        return None
    progress = Progress.resumed(run, executor)
    crawler = Crawler(progress.state.get("crawler"))
    try:
        progress.heartbeat()
        listed = listing_read(run.source, crawler, progress)
        pages_sync(run.source, crawler, progress)
        gone_delete(run.source, set(listed), progress)
    except MustWait as wait:
        return _wait(progress, crawler, wait.seconds)
    except RunLost:
        return None
    except (SiteUnavailable, UnsafeUrl, GuardTripped) as exc:
        return _finish(progress, SourceRunStatus.FAILED, str(exc))
    except Exception as exc:
        logger.exception("sync run %s failed", run_id)
        return _finish(progress, SourceRunStatus.FAILED, f"Internal error: {type(exc).__name__}.")
    failed, stored = progress.counts["failed"], sum(progress.counts[c] for c in COUNTS[:3])
    if failed and not stored:
        return _finish(progress, SourceRunStatus.FAILED, "No page could be fetched.")
    status = SourceRunStatus.PARTIAL if failed else SourceRunStatus.COMPLETED
    return _finish(progress, status, "")


def _wait(progress: Progress, crawler: Crawler, seconds: float) -> SourceRun | None:
    """Hand the run back to the queue for ``seconds``: no worker sleeps
    through a host's Crawl-delay."""
    try:
        resume_at = progress.wait(seconds, crawler.state())
    except RunLost:
        return None
    run_enqueue(progress.run.pk, countdown=seconds)
    logger.info(
        "sync run %s waits %.1f s (until %s) for its next request", progress.run.pk, seconds, resume_at
    )
    return SourceRun.objects.get(pk=progress.run.pk)


def _finish(progress: Progress, status: str, error: str) -> SourceRun | None:
    if not progress.finish(status, error):
        return None
    run = SourceRun.objects.get(pk=progress.run.pk)
    run_event_emit(run, workspace_id=progress.run.source.workspace_id)
    return run
