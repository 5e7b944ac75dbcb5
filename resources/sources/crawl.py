"""What a sync may fetch and when: robots.txt per host, the pause between
two requests to one host, and a sitemap (or a sitemap index) read.

A pause longer than SOURCES_INLINE_WAIT_MS (a robots.txt ``Crawl-delay``,
up to a minute) is not slept in the worker: :class:`MustWait` says how long,
and the run hands itself back to the queue with that countdown
(resources/sources/run.py). So the crawler's memory — each host's robots.txt
and the time of its last request — is a JSON-able :meth:`Crawler.state`
that the run keeps and gives back when it resumes."""

from __future__ import annotations

import gzip
import io
import time
import zlib
from typing import Any
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser
from xml.etree import ElementTree

from django.conf import settings

from resources.sources import fetch

MAX_SITEMAP_BYTES = 20 * 1024 * 1024
ROBOTS_MAX_BYTES = 512 * 1024
# The longest Crawl-delay honoured; a longer one is taken as this.
MAX_CRAWL_DELAY_SECONDS = 60.0


class SiteUnavailable(Exception):
    """The sitemap or robots.txt gave no usable answer (5xx, 404, a timeout,
    not XML): the run fails and deletes nothing."""


class MustWait(Exception):
    """The next request to a host may not go for ``seconds``, longer than a
    worker waits: nothing was fetched."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"The next request waits {seconds:.1f} s.")
        self.seconds = seconds


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class Crawler:
    """One run's requests: each host's robots.txt read once, and requests to
    one host spaced by SOURCES_REQUEST_DELAY_MS (or its longer Crawl-delay)."""

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        state = state or {}
        # Each host's robots.txt as it answered; None: it has none (4xx).
        self._robots_text: dict[str, str | None] = dict(state.get("robots", {}))
        # Each host's last request, in seconds since the epoch (it outlives the worker).
        self._last: dict[str, float] = dict(state.get("last", {}))
        self._parsed: dict[str, RobotFileParser | None] = {}

    def state(self) -> dict[str, Any]:
        return {"robots": self._robots_text, "last": self._last}

    def _delay(self, origin: str) -> float:
        delay = settings.SOURCES_REQUEST_DELAY_MS / 1000
        robots = self._parsed_robots(origin) if origin in self._robots_text else None
        crawl_delay = robots.crawl_delay(fetch.USER_AGENT) if robots is not None else None
        if crawl_delay:
            delay = max(delay, min(float(crawl_delay), MAX_CRAWL_DELAY_SECONDS))
        return delay

    def _pace(self, url: str) -> None:
        origin = _origin(url)
        wait = self._last.get(origin, 0.0) + self._delay(origin) - time.time()
        if wait > settings.SOURCES_INLINE_WAIT_MS / 1000:
            raise MustWait(wait)
        if wait > 0:
            time.sleep(wait)
        self._last[origin] = time.time()

    def get(self, url: str, *, max_bytes: int, etag: str = "", last_modified: str = "") -> fetch.Answer:
        """``fetch.get`` when the host's pause allows (:class:`MustWait` when not yet)."""
        self._pace(url)
        return fetch.get(url, max_bytes=max_bytes, etag=etag, last_modified=last_modified)

    def allowed(self, url: str) -> bool:
        """Whether the host's robots.txt lets us fetch ``url``. A robots.txt
        that is missing (4xx) allows everything; one that answers 5xx or not
        at all is :class:`SiteUnavailable` (RFC 9309: assume disallowed)."""
        robots = self._parsed_robots(_origin(url))
        return robots is None or robots.can_fetch(fetch.USER_AGENT, url)

    def _parsed_robots(self, origin: str) -> RobotFileParser | None:
        if origin not in self._robots_text:
            self._robots_text[origin] = self._robots_read(origin)
        if origin not in self._parsed:
            text = self._robots_text[origin]
            parser = None if text is None else RobotFileParser()
            if parser is not None and text is not None:
                parser.parse(text.splitlines())
            self._parsed[origin] = parser
        return self._parsed[origin]

    def _robots_read(self, origin: str) -> str | None:
        try:
            answer = self.get(origin + "/robots.txt", max_bytes=ROBOTS_MAX_BYTES)
        except fetch.FetchFailed as exc:
            raise SiteUnavailable(f"{origin}/robots.txt: {exc}") from None
        if 400 <= answer.status < 500:
            return None
        if answer.status != 200:
            raise SiteUnavailable(f"{origin}/robots.txt answered {answer.status}.")
        return answer.body.decode("utf-8", "replace")

    def sitemap_read(self, url: str) -> tuple[str, list[str]]:
        """One sitemap: ``urlset`` or ``sitemapindex``, and the URLs it lists
        (the host's robots.txt read first, for its Crawl-delay)."""
        self._parsed_robots(_origin(url))
        try:
            answer = self.get(url, max_bytes=MAX_SITEMAP_BYTES)
        except fetch.FetchFailed as exc:
            raise SiteUnavailable(f"The sitemap {url}: {exc}") from None
        if answer.status != 200:
            raise SiteUnavailable(f"The sitemap {url} answered {answer.status}.")
        return _sitemap_parse(url, answer.body)


def _sitemap_parse(url: str, body: bytes) -> tuple[str, list[str]]:
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
