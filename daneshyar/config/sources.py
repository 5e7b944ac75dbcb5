"""Web sources (resources/sources/, docs/ingestion.md "Web sources").

``daneshyar/settings.py`` imports these names; each is listed with its default
in docs/configuration.md and .env.example. Which addresses a source may fetch
follows OUTBOUND_ALLOW_PRIVATE (daneshyar/config/outbound.py).
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from daneshyar.env import env_int

__all__ = [
    "SOURCES_FETCH_TIMEOUT_SECONDS",
    "SOURCES_INLINE_WAIT_MS",
    "SOURCES_MAX_PAGES",
    "SOURCES_PER_WORKSPACE",
    "SOURCES_REQUEST_DELAY_MS",
    "SOURCES_RUN_STALE_SECONDS",
    "SOURCES_SWEEP_SECONDS",
]

# The pause between two requests of a sync to one host (a robots.txt
# Crawl-delay longer than this is kept).
SOURCES_REQUEST_DELAY_MS = env_int("SOURCES_REQUEST_DELAY_MS", 1000, minimum=0, maximum=60_000)
# The longest pause a sync waits inside its worker before its next request to
# a host; a longer one (a robots.txt Crawl-delay) hands the run back to the
# queue with that countdown, so that no worker sleeps through it.
SOURCES_INLINE_WAIT_MS = env_int("SOURCES_INLINE_WAIT_MS", 2000, minimum=0, maximum=10_000)
# One whole deadline per request of a sync (a page, a sitemap, robots.txt):
# connection, request, headers and the whole body together.
SOURCES_FETCH_TIMEOUT_SECONDS = env_int("SOURCES_FETCH_TIMEOUT_SECONDS", 20, minimum=1, maximum=300)
# Per workspace: how many web sources it may hold, and the most pages one run
# fetches (a source's max_pages is capped by it).
SOURCES_PER_WORKSPACE = env_int("SOURCES_PER_WORKSPACE", 100, minimum=1)
SOURCES_MAX_PAGES = env_int("SOURCES_MAX_PAGES", 10_000, minimum=1, maximum=100_000)
# How often beat starts the runs that are due and fails the stale ones.
SOURCES_SWEEP_SECONDS = env_int("SOURCES_SWEEP_SECONDS", 60, minimum=1)
# A running sync whose heartbeat is older than this lost its worker: failed.
SOURCES_RUN_STALE_SECONDS = env_int("SOURCES_RUN_STALE_SECONDS", 600, minimum=30)
# A run beats between requests (every 10 s at most): one request, at its
# deadline, must not make its worker look lost.
if SOURCES_RUN_STALE_SECONDS < 2 * SOURCES_FETCH_TIMEOUT_SECONDS + 10:
    raise ImproperlyConfigured(
        "SOURCES_RUN_STALE_SECONDS must be at least twice SOURCES_FETCH_TIMEOUT_SECONDS plus 10, got "
        f"{SOURCES_RUN_STALE_SECONDS} for {SOURCES_FETCH_TIMEOUT_SECONDS}"
    )
