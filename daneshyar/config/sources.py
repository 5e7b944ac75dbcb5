"""Web sources (resources/sources/, docs/ingestion.md "Web sources").

``daneshyar/settings.py`` imports these names; each is listed with its default
in docs/configuration.md and .env.example. Which addresses a source may fetch
follows WEBHOOK_ALLOW_PRIVATE (daneshyar/config/webhooks.py).
"""

from __future__ import annotations

from daneshyar.env import env_int

__all__ = [
    "SOURCES_REQUEST_DELAY_MS",
    "SOURCES_RUN_STALE_SECONDS",
    "SOURCES_SWEEP_SECONDS",
]

# The pause between two requests of a sync to one host (a robots.txt
# Crawl-delay longer than this is kept).
SOURCES_REQUEST_DELAY_MS = env_int("SOURCES_REQUEST_DELAY_MS", 1000, minimum=0, maximum=60_000)
# How often beat starts the runs that are due and fails the stale ones.
SOURCES_SWEEP_SECONDS = env_int("SOURCES_SWEEP_SECONDS", 60, minimum=1)
# A running sync whose heartbeat is older than this lost its worker: failed.
SOURCES_RUN_STALE_SECONDS = env_int("SOURCES_RUN_STALE_SECONDS", 600, minimum=30)
