"""What one sync walks: the listing (the sitemap, or the source's URLs),
each page fetched with a conditional request and stored as a document named
by its URL (``external_id``: a changed page replaces its document in place,
resources/external.py; the same bytes embed nothing), and the documents
whose page is gone deleted, under the guard.

Each step goes on from where the run's progress stands
(resources/sources/progress.py) and raises :class:`MustWait` before any
request it may not make yet, leaving the progress as it was before it.
"""

from __future__ import annotations

import html
import logging
import re
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction

from daneshyar.exceptions import ApplicationError
from daneshyar.outbound import UnsafeUrl
from resources.external import MAX_EXTERNAL_ID_CHARS, External
from resources.manifest import external_ids_delete
from resources.models import Source, SourceKind, SourcePage
from resources.services import Upload, resource_create
from resources.sources import fetch
from resources.sources.crawl import Crawler, SiteUnavailable
from resources.sources.progress import Progress

logger = logging.getLogger(__name__)

# Sitemap entries read at most (pages past ``max_pages`` are counted skipped).
MAX_LISTED = 100_000
# Sitemaps read in one run (an index and the sitemaps it names).
MAX_SITEMAPS = 100
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


class GuardTripped(Exception):
    """Too many documents would be deleted: nothing is."""


def listing_read(source: Source, crawler: Crawler, progress: Progress) -> list[str]:
    """The page URLs the run walks, in order, without repeats: the source's
    URLs, or those its sitemap lists (an index followed), at most
    MAX_LISTED (+1, to tell "more"). Read once per run, across its waits."""
    if not progress.state.get("listed"):
        if source.kind == SourceKind.SITEMAP:
            _sitemaps_read(source, crawler, progress)
        else:
            progress.listing = list(dict.fromkeys(source.urls))
        progress.state["listed"] = True
    return progress.listing


def _sitemaps_read(source: Source, crawler: Crawler, progress: Progress) -> None:
    state = progress.state
    queue: list[str] = state.setdefault("sitemaps", [source.urls[0]])
    seen = set(progress.listing)
    while queue and len(progress.listing) <= MAX_LISTED:
        if state.get("sitemaps_read", 0) >= MAX_SITEMAPS:
            raise SiteUnavailable(f"More than {MAX_SITEMAPS} sitemaps.")
        kind, locs = crawler.sitemap_read(queue[0])  # MustWait leaves it first in the queue
        queue.pop(0)
        state["sitemaps_read"] = state.get("sitemaps_read", 0) + 1
        if kind == "sitemapindex":
            queue.extend(locs)
            continue
        for loc in locs:
            if loc not in seen:
                seen.add(loc)
                progress.listing.append(loc)
    del progress.listing[MAX_LISTED + 1 :]


def _walked(source: Source, url: str, hosts: set[str]) -> bool:
    """Whether a listed URL is one the source fetches (its host, http(s), a
    valid external id)."""
    parts = urlsplit(url)
    return (
        len(url) <= MAX_EXTERNAL_ID_CHARS
        and parts.scheme in ("http", "https")
        and (not source.same_host or (parts.hostname or "").lower() in hosts)
    )


def pages_sync(source: Source, crawler: Crawler, progress: Progress) -> None:
    """Fetch and store the listed pages from the run's cursor on, within the
    limits: ``max_pages`` (capped by SOURCES_MAX_PAGES) fetched, the rest
    ``skipped``, as are pages robots.txt disallows."""
    pages = {page.url: page for page in SourcePage.objects.filter(source=source)}
    hosts = {(urlsplit(url).hostname or "").lower() for url in source.urls}
    limit = min(source.max_pages, settings.SOURCES_MAX_PAGES)
    while progress.cursor < len(progress.listing):
        url = progress.listing[progress.cursor]
        if progress.taken >= limit or not _walked(source, url, hosts) or not crawler.allowed(url):
            name = "skipped"
        else:
            name = _sync_page(source, crawler, url, pages.get(url), progress)
            progress.take()
        progress.cursor += 1  # before the count: a heartbeat saves the two together
        progress.add(name)


def _sync_page(
    source: Source, crawler: Crawler, url: str, page: SourcePage | None, progress: Progress
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
    return _store(source, url, answer)


def _store(source: Source, url: str, answer: fetch.Answer) -> str:
    try:
        outcome = resource_create(
            workspace=source.workspace,
            upload=Upload(
                data=answer.body,
                title=page_title(answer.body),
                filename=(urlsplit(url).path.rsplit("/", 1)[-1] or urlsplit(url).hostname or "")[:200],
                claimed_type=answer.content_type.split(";", 1)[0].strip(),
            ),
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


def gone_delete(source: Source, listed: set[str], progress: Progress) -> None:
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
