"""One sync of a web source: list its pages (the sitemap, or the source's
URLs), fetch each with a conditional request, store the new and changed ones
as documents named by their URL (``external_id``: a changed page replaces
its document in place, resources/external.py; the same bytes embed
nothing), then delete the documents whose page is gone (404/410, or no
longer listed) — unless more than ``max_delete_percent`` of the source's
documents would go, or the site did not answer: then the run is ``failed``
and deletes nothing."""

from __future__ import annotations

import html
import logging
import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from daneshyar.exceptions import ApplicationError
from daneshyar.outbound import UnsafeUrl
from resources.external import MAX_EXTERNAL_ID_CHARS, External
from resources.manifest import external_ids_delete
from resources.models import Source, SourceKind, SourcePage, SourceRun, SourceRunStatus
from resources.services import resource_create
from resources.sources import fetch
from resources.sources.crawl import Crawler, SiteUnavailable
from resources.sources.events import run_event_emit

logger = logging.getLogger(__name__)

# Sitemap entries read at most (pages past ``max_pages`` are counted skipped).
MAX_LISTED = 100_000
HEARTBEAT_SECONDS = 10.0
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
COUNTS = ("new", "changed", "unchanged", "deleted", "failed", "skipped")


class RunLost(Exception):
    """The run was failed meanwhile (by the sweep): this worker stops."""


class GuardTripped(Exception):
    """Too many documents would be deleted: nothing is."""


@dataclass
class _Progress:
    run: SourceRun
    executor: uuid.UUID
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    gone: list[str] = field(default_factory=list)
    beat_at: float = field(default_factory=time.monotonic)

    def add(self, name: str) -> None:
        if name:  # "": a page gone, counted when it is deleted
            self.counts[name] += 1
        if time.monotonic() - self.beat_at >= HEARTBEAT_SECONDS:
            self.heartbeat()

    def mine(self) -> QuerySet[SourceRun]:
        """The run, while it is running and this worker holds it."""
        return SourceRun.objects.filter(
            pk=self.run.pk, status=SourceRunStatus.RUNNING, executor=self.executor
        )

    def heartbeat(self) -> None:
        self.beat_at = time.monotonic()
        alive = self.mine().update(heartbeat_at=timezone.now(), **self.counts)
        if not alive:
            raise RunLost()


def source_run_execute(run_id: uuid.UUID | str) -> SourceRun | None:
    """Carry out the run (its worker's task); None when it is no longer
    running (done already, or failed by the sweep), or when another worker
    is carrying it out. Safe to call again, and twice at once."""
    executor = run_claim(run_id)
    if executor is None:
        logger.info("sync run %s: not running, or carried out by another worker", run_id)
        return None
    return _execute(run_id, executor)


def run_claim(run_id: uuid.UUID | str) -> uuid.UUID | None:
    """Take the run for this worker: its ``executor``, or None when the run
    is not ``running`` or another worker holds it (its heartbeat newer than
    SOURCES_RUN_STALE_SECONDS). Redis hands an unacknowledged task to a
    second worker after the broker's visibility timeout (an hour) while the
    first may still run it (acks_late): the second finds the run held and
    does nothing; the first, should it lose its claim, stops (RunLost). A
    row, not a session lock: safe behind a transaction-pooling PgBouncer."""
    executor = uuid.uuid4()
    now = timezone.now()
    stale = now - timedelta(seconds=settings.SOURCES_RUN_STALE_SECONDS)
    taken = (
        SourceRun.objects.filter(pk=run_id, status=SourceRunStatus.RUNNING)
        .filter(Q(executor__isnull=True) | Q(heartbeat_at__lt=stale))
        .update(executor=executor, heartbeat_at=now)
    )
    return executor if taken else None


def _execute(run_id: uuid.UUID | str, executor: uuid.UUID) -> SourceRun | None:
    run = SourceRun.objects.select_related("source__workspace").filter(pk=run_id).first()
    if run is None or run.status != SourceRunStatus.RUNNING:
        return None
    progress = _Progress(run, executor)
    try:
        progress.heartbeat()
        listed = _sync_pages(run.source, Crawler(), progress)
        _delete_gone(run.source, listed, progress)
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


def _finish(progress: _Progress, status: str, error: str) -> SourceRun | None:
    updated = progress.mine().update(
        status=status, error=error[:2000], finished_at=timezone.now(), **progress.counts
    )
    if not updated:
        return None
    run = SourceRun.objects.get(pk=progress.run.pk)
    run_event_emit(run, workspace_id=progress.run.source.workspace_id)
    return run


def _hosts(source: Source) -> set[str]:
    return {(urlsplit(url).hostname or "").lower() for url in source.urls}


def _listing(source: Source, crawler: Crawler) -> list[str]:
    if source.kind == SourceKind.SITEMAP:
        return crawler.sitemap_urls(source.urls[0], MAX_LISTED)
    return list(dict.fromkeys(source.urls))


def _sync_pages(source: Source, crawler: Crawler, progress: _Progress) -> set[str]:
    """Fetch and store every listed page in the limits; the URLs listed."""
    listed = _listing(source, crawler)
    pages = {page.url: page for page in SourcePage.objects.filter(source=source)}
    hosts, taken = _hosts(source), 0
    for url in listed:
        if (
            taken >= source.max_pages
            or len(url) > MAX_EXTERNAL_ID_CHARS
            or (source.same_host and (urlsplit(url).hostname or "").lower() not in hosts)
            or urlsplit(url).scheme not in ("http", "https")
            or not crawler.allowed(url)
        ):
            progress.add("skipped")
            continue
        taken += 1
        progress.add(_sync_page(source, crawler, url, pages.get(url), progress))
    return set(listed)


def _sync_page(
    source: Source, crawler: Crawler, url: str, page: SourcePage | None, progress: _Progress
) -> str:
    """Fetch one page and store it; the name of the count it adds to."""
    held = page is not None and page.resource_id is not None
    try:
        answer = crawler.get(
            url,
            max_bytes=source.max_page_bytes,
            etag=page.etag if held and page else "",
            last_modified=page.last_modified if held and page else "",
        )
    except (UnsafeUrl, fetch.FetchFailed) as exc:
        logger.info("source %s: %s: %s", source.pk, url, exc)
        return "failed"
    if answer.status == 304 and held:
        return "unchanged"
    if answer.status in (404, 410):
        if held:
            progress.gone.append(url)
        return "" if held else "skipped"
    if answer.status != 200:
        return "failed"
    try:
        outcome = resource_create(
            workspace=source.workspace,
            data=answer.body,
            title=page_title(answer.body),
            filename=(urlsplit(url).path.rsplit("/", 1)[-1] or urlsplit(url).hostname or "")[:200],
            claimed_type=answer.content_type.split(";", 1)[0].strip(),
            external=External(url),
        )
    except ApplicationError as exc:  # unsupported format, too large, quota, duplicate bytes
        logger.info("source %s: %s: %s", source.pk, url, exc)
        return "failed"
    SourcePage.objects.update_or_create(
        source=source,
        url=url,
        defaults={"resource": outcome.resource, "etag": answer.etag, "last_modified": answer.last_modified},
    )
    return "new" if outcome.created else "changed" if outcome.replaced else "unchanged"


def page_title(body: bytes) -> str:
    """An HTML page's ``<title>``, or "" (the document is then titled from its text)."""
    found = _TITLE.search(body[:65536])
    if found is None:
        return ""
    return " ".join(html.unescape(found[1].decode("utf-8", "replace")).split())[:500]


def _delete_gone(source: Source, listed: set[str], progress: _Progress) -> None:
    """Delete the documents of pages gone (404/410) or no longer listed,
    with the guard: more than ``max_delete_percent`` of the source's
    documents is :class:`GuardTripped`, and nothing is deleted."""
    held = dict(
        SourcePage.objects.filter(source=source, resource__isnull=False).values_list("url", "resource_id")
    )
    gone = sorted({url for url in held if url not in listed} | {u for u in progress.gone if u in held})
    if not gone:
        return
    if len(gone) * 100 > source.max_delete_percent * len(held):
        progress.counts["skipped"] += len(gone)
        raise GuardTripped(
            f"{len(gone)} of the source's {len(held)} documents would be deleted, more than "
            f"{source.max_delete_percent}%: nothing was deleted. Check the site, or raise "
            "max_delete_percent to let them go."
        )
    with transaction.atomic():
        deleted, _missing = external_ids_delete(workspace=source.workspace, external_ids=gone)
        SourcePage.objects.filter(source=source, url__in=gone).delete()
    progress.counts["deleted"] += len(deleted)
