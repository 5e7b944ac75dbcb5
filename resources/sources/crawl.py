"""What a sync may fetch and in what order: robots.txt per host, a pause
between two requests to one host, and the pages a sitemap (or a sitemap
index) lists."""

from __future__ import annotations

import gzip
import io
import time
import zlib
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser
from xml.etree import ElementTree

from django.conf import settings

from resources.sources import fetch

MAX_SITEMAP_BYTES = 20 * 1024 * 1024
# Sitemaps read in one run (an index and the sitemaps it names).
MAX_SITEMAPS = 100
ROBOTS_MAX_BYTES = 512 * 1024


class SiteUnavailable(Exception):
    """The sitemap or robots.txt gave no usable answer (5xx, 404, a timeout,
    not XML): the run fails and deletes nothing."""


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class Crawler:
    """One run's requests: each host's robots.txt read once, and requests
    to one host spaced by SOURCES_REQUEST_DELAY_MS (or its Crawl-delay)."""

    def __init__(self) -> None:
        self._robots: dict[str, RobotFileParser | None] = {}
        self._last: dict[str, float] = {}

    def _pace(self, url: str) -> None:
        origin = _origin(url)
        delay = settings.SOURCES_REQUEST_DELAY_MS / 1000
        robots = self._robots.get(origin)
        crawl_delay = robots.crawl_delay(fetch.USER_AGENT) if robots is not None else None
        if crawl_delay:
            delay = max(delay, min(float(crawl_delay), 60.0))
        wait = self._last.get(origin, 0.0) + delay - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._last[origin] = time.monotonic()

    def get(self, url: str, *, max_bytes: int, etag: str = "", last_modified: str = "") -> fetch.Answer:
        self._pace(url)
        return fetch.get(url, max_bytes=max_bytes, etag=etag, last_modified=last_modified)

    def allowed(self, url: str) -> bool:
        """Whether the host's robots.txt lets us fetch ``url``. A robots.txt
        that is missing (4xx) allows everything; one that answers 5xx or not
        at all is :class:`SiteUnavailable` (RFC 9309: assume disallowed)."""
        origin = _origin(url)
        if origin not in self._robots:
            self._robots[origin] = self._robots_read(origin)
        robots = self._robots[origin]
        return robots is None or robots.can_fetch(fetch.USER_AGENT, url)

    def _robots_read(self, origin: str) -> RobotFileParser | None:
        try:
            answer = self.get(origin + "/robots.txt", max_bytes=ROBOTS_MAX_BYTES)
        except fetch.FetchFailed as exc:
            raise SiteUnavailable(f"{origin}/robots.txt: {exc}") from None
        if 400 <= answer.status < 500:
            return None
        if answer.status != 200:
            raise SiteUnavailable(f"{origin}/robots.txt answered {answer.status}.")
        parser = RobotFileParser()
        parser.parse(answer.body.decode("utf-8", "replace").splitlines())
        return parser

    def sitemap_urls(self, url: str, limit: int) -> list[str]:
        """The page URLs of the sitemap at ``url`` (an index is followed),
        in order, without repeats, at most ``limit`` (+1, to tell "more")."""
        pages: dict[str, None] = {}
        queue, read = [url], 0
        while queue and len(pages) <= limit:
            sitemap = queue.pop(0)
            read += 1
            if read > MAX_SITEMAPS:
                raise SiteUnavailable(f"More than {MAX_SITEMAPS} sitemaps.")
            kind, locs = _sitemap_read(self, sitemap)
            if kind == "sitemapindex":
                queue.extend(locs)
            else:
                pages.update(dict.fromkeys(locs))
        return list(pages)[: limit + 1]


def _sitemap_read(crawler: Crawler, url: str) -> tuple[str, list[str]]:
    try:
        answer = crawler.get(url, max_bytes=MAX_SITEMAP_BYTES)
    except fetch.FetchFailed as exc:
        raise SiteUnavailable(f"The sitemap {url}: {exc}") from None
    if answer.status != 200:
        raise SiteUnavailable(f"The sitemap {url} answered {answer.status}.")
    body = answer.body
    if body[:2] == b"\x1f\x8b":
        try:
            body = gzip.GzipFile(fileobj=io.BytesIO(body)).read(MAX_SITEMAP_BYTES + 1)
        except (OSError, EOFError, zlib.error):
            raise SiteUnavailable(f"The sitemap {url} is not valid gzip.") from None
        if len(body) > MAX_SITEMAP_BYTES:
            raise SiteUnavailable(f"The sitemap {url} is larger than {MAX_SITEMAP_BYTES:,} bytes.")
    try:
        # expat (>= 2.4) refuses entity expansion bombs; the body is bounded.
        root = ElementTree.fromstring(body)  # noqa: S314
    except ElementTree.ParseError:
        raise SiteUnavailable(f"The sitemap {url} is not XML.") from None
    kind = root.tag.rsplit("}", 1)[-1]
    if kind not in ("urlset", "sitemapindex"):
        raise SiteUnavailable(f"The sitemap {url} is neither a urlset nor a sitemapindex.")
    locs = [(el.text or "").strip() for el in root.iter() if el.tag.rsplit("}", 1)[-1] == "loc" and el.text]
    return kind, [loc for loc in locs if loc]
