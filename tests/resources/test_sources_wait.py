"""A robots.txt Crawl-delay is waited out in the queue, never in a worker:
the run saves where it stands, releases its claim and queues its task again
with the delay as countdown; the next delivery goes on from there. Here with
a minute's delay (each countdown made to pass by moving the run's clock
back), the sweep leaving a waiting run alone, and a real worker (one slot)
carrying another source's sync out while the first waits."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from pytest_django import Settings

from resources.models import Source, SourceRun, SourceRunStatus
from resources.sources import services
from resources.sources.run import source_run_execute
from tests.conftest import Tenant
from tests.resources.fixture_site import Site, allow_local_site, page, serving
from tests.worker import purge_queue, stop_process, worker_process

A_MINUTE = b"User-agent: *\nCrawl-delay: 60\n"


@pytest.fixture(autouse=True)
def local_site_allowed(settings: Settings) -> None:
    allow_local_site(settings)


def _source(tenant: Tenant, site: Site) -> Source:
    fields = services.SourceFields(kind="sitemap", urls=[site.url("/sitemap.xml")], max_pages=10)
    return services.source_create(workspace=tenant.workspace, fields=fields)


def _countdown_passes(run: SourceRun) -> None:
    """What a minute does to a waiting run: its host's last request is a
    minute old, and its task is due."""
    row = SourceRun.objects.get(pk=run.pk)
    last = row.state["crawler"]["last"]
    row.state["crawler"]["last"] = {origin: at - 61 for origin, at in last.items()}
    SourceRun.objects.filter(pk=run.pk).update(state=row.state, resume_at=timezone.now())


@pytest.mark.django_db
def test_a_crawl_delay_of_a_minute_hands_the_run_back_to_the_queue(owner: Tenant) -> None:
    pages = {f"/p/{n}": page(n) for n in range(3)}
    with serving(Site(pages=pages, robots=A_MINUTE)) as site:
        run = services.source_sync_start(source=_source(owner, site))
        # robots.txt, then one request per delivery: the sitemap and each page.
        for asked in (["/robots.txt"], ["/sitemap.xml"], ["/p/0"], ["/p/1"]):
            site.requests.clear()
            started = time.monotonic()
            waiting = source_run_execute(run.id)
            assert time.monotonic() - started < 10  # the minute was not slept
            assert waiting is not None and waiting.status == SourceRunStatus.RUNNING
            assert [path for path, _ in site.requests] == asked
            assert waiting.executor is None and waiting.resume_at is not None  # no worker holds it
            assert 50 < (waiting.resume_at - timezone.now()).total_seconds() <= 60
            assert source_run_execute(run.id) is None  # a copy delivered before its time does nothing
            _countdown_passes(run)
        stored = SourceRun.objects.get(pk=run.pk)
        assert (stored.listing, stored.cursor, stored.new) == ([site.url(p) for p in pages], 2, 2)
        done = source_run_execute(run.id)
        assert [path for path, _ in site.requests] == ["/p/1", "/p/2"]
    assert done is not None and (done.status, done.new) == (SourceRunStatus.COMPLETED, 3)
    assert (done.listing, done.state, done.resume_at) == ([], {}, None)  # what it walked is dropped


@pytest.mark.django_db
def test_the_sweep_leaves_a_waiting_run_alone_until_its_countdown_is_stale(
    owner: Tenant, settings: Settings
) -> None:
    with serving(Site(pages={"/p/0": page(0)}, robots=A_MINUTE)) as site:
        run = services.source_sync_start(source=_source(owner, site))
        waiting = source_run_execute(run.id)
    assert waiting is not None and waiting.resume_at is not None
    stale = timedelta(seconds=settings.SOURCES_RUN_STALE_SECONDS + 1)
    # Its heartbeat is stale by then, but it only waits for its countdown.
    assert services.sources_sweep(now=timezone.now() + stale) == (0, 0)
    assert SourceRun.objects.get(pk=run.pk).status == SourceRunStatus.RUNNING
    # Long past its countdown: the message was lost, and the run with it.
    assert services.sources_sweep(now=waiting.resume_at + stale) == (1, 0)
    lost = SourceRun.objects.get(pk=run.pk)
    assert lost.status == SourceRunStatus.FAILED and "lost" in lost.error and lost.state == {}


def _until(condition: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_waiting_run_holds_no_worker(owner: Tenant, tmp_path: Path) -> None:
    """One worker, one slot: while a site with a 2-second Crawl-delay waits
    between its requests, another source's sync is carried out whole."""
    purge_queue()
    env = {"SOURCES_INLINE_WAIT_MS": "500", "SOURCES_REQUEST_DELAY_MS": "0"}
    worker = worker_process("--pool=solo", env=env, log=tmp_path / "worker.log")  # every queue
    slow_pages = {f"/p/{n}": page(n) for n in range(3)}
    quick_pages = {f"/q/{n}": page(10 + n) for n in range(3)}
    try:
        with (
            serving(Site(pages=slow_pages, robots=b"User-agent: *\nCrawl-delay: 2\n")) as slow,
            serving(Site(pages=quick_pages)) as quick,
        ):
            first = services.source_sync_start(source=_source(owner, slow))
            _until(lambda: len(slow.requests) >= 1, timeout=120)  # the slow one started first
            second = services.source_sync_start(source=_source(owner, quick))
            runs = SourceRun.objects.filter(pk__in=[first.id, second.id])
            _until(lambda: not runs.filter(status=SourceRunStatus.RUNNING).exists(), timeout=240)
            slow_times, quick_times = list(slow.times), list(quick.times)
    finally:
        stop_process(worker)
        purge_queue()
    done = {run.pk: run for run in runs}
    for run_id in (first.id, second.id):
        assert (done[run_id].status, done[run_id].new) == (SourceRunStatus.COMPLETED, 3), done[run_id].error
    assert len(slow_times) == 5 and all(b - a >= 1.9 for a, b in itertools.pairwise(slow_times))
    # The quick sync ran inside the slow one's waits, on the only slot there is.
    assert slow_times[0] < quick_times[0] and quick_times[-1] < slow_times[-1]
