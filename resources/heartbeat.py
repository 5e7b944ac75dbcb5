"""A heartbeat kept while a step runs that reports no progress of its own.

Parsing a large document can take longer than INGEST_STALE_AFTER_SECONDS
without a point where the ingestion could refresh ``ingest_heartbeat_at``;
the sweep would then re-queue it while it still runs. A small daemon thread
beats instead, on its own database connection (Django's connections are per
thread), closed when the step ends.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.db import connections

logger = logging.getLogger(__name__)


@contextmanager
def heartbeat_while(beat: Callable[[], None], *, interval: float, limit: float) -> Iterator[None]:
    """Call ``beat`` every ``interval`` seconds while the block runs.

    Never for longer than ``limit`` seconds: a step stuck past its own bound
    (a parse stuck in C code, on a pool without time limits) goes stale, so
    the sweep still sees it.
    """
    stop = threading.Event()
    started = time.monotonic()

    def run() -> None:
        try:
            while not stop.wait(interval):
                if time.monotonic() - started > limit:
                    return
                try:
                    beat()
                except Exception:  # a database hiccup must not end the parse
                    logger.warning("heartbeat failed", exc_info=True)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, name="ingest-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
