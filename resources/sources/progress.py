"""A run's progress, kept on its row (``SourceRun``): the counts, and where
the run stands — the pages listed, the index of the next one, the crawler's
state — so that a run waiting out a host's Crawl-delay leaves its worker,
and the next delivery of its task goes on from there.

Only the worker holding the run (its ``executor``, resources/sources/run.py:
``run_claim``) writes it: every write is filtered by the claim, and one that
finds the run no longer held raises :class:`RunLost`.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from resources.models import SourceRun, SourceRunStatus

COUNTS = ("new", "changed", "unchanged", "deleted", "failed", "skipped")
HEARTBEAT_SECONDS = 10.0


class RunLost(Exception):
    """The run was failed or taken over meanwhile (by the sweep, by another
    worker): this worker stops."""


@dataclass
class Progress:
    run: SourceRun
    executor: uuid.UUID
    counts: dict[str, int]
    listing: list[str]
    cursor: int
    # taken (pages fetched, against max_pages), gone (held pages answering
    # 404/410), listed (the listing is whole), sitemaps / sitemaps_read (the
    # listing's reading), crawler (resources/sources/crawl.py: Crawler.state).
    state: dict[str, Any]
    listing_stored: int = 0  # how many of ``listing`` the row holds
    beat_at: float = field(default_factory=time.monotonic)

    @classmethod
    def resumed(cls, run: SourceRun, executor: uuid.UUID) -> Progress:
        """The progress the run's row holds (none for a new run)."""
        return cls(
            run=run,
            executor=executor,
            counts={name: getattr(run, name) for name in COUNTS},
            listing=list(run.listing),
            cursor=run.cursor,
            state=dict(run.state),
            listing_stored=len(run.listing),
        )

    @property
    def taken(self) -> int:
        return int(self.state.get("taken", 0))

    def take(self) -> None:
        self.state["taken"] = self.taken + 1

    @property
    def gone(self) -> list[str]:
        gone: list[str] = self.state.setdefault("gone", [])
        return gone

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

    def _saved(self) -> dict[str, Any]:
        """Where the run stands, as its row's fields: the counts and what they
        count so far (``cursor``: the pages before it are counted), so that a
        worker taking the run over goes on from here, counting nothing twice."""
        saved: dict[str, Any] = {"cursor": self.cursor, "state": self.state, **self.counts}
        if len(self.listing) != self.listing_stored:  # a long listing is written once
            saved["listing"] = self.listing
        return saved

    def _save(self, **fields: Any) -> None:
        saved = self._saved()
        if not self.mine().update(**saved, **fields):
            raise RunLost()
        self.listing_stored = len(self.listing)

    def heartbeat(self) -> None:
        self.beat_at = time.monotonic()
        self._save(heartbeat_at=timezone.now())

    def wait(self, seconds: float, crawler: dict[str, Any]) -> datetime:
        """Leave the run to its task's countdown: where it stands saved, the
        claim released (the next delivery takes it), ``resume_at`` set (the
        sweep leaves it alone till then). When it goes on."""
        now = timezone.now()
        resume_at = now + timedelta(seconds=seconds)
        self.state["crawler"] = crawler
        self._save(heartbeat_at=now, resume_at=resume_at, executor=None)
        return resume_at

    def finish(self, status: str, error: str) -> bool:
        """End the run; False when this worker no longer held it. What the
        run walked is dropped: the runs' list keeps only what they did."""
        return bool(
            self.mine().update(
                status=status,
                error=error[:2000],
                finished_at=timezone.now(),
                listing=[],
                state={},
                **self.counts,
            )
        )
