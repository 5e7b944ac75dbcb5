"""A web source's sync whose worker is killed mid-run (issue 34's
acceptance): a real Celery worker process syncing a real local site is
killed with SIGKILL while it fetches; the run it held is left ``running``
until the sweep finds its heartbeat stale and fails it (no run stays
``running``); the next run, on a new worker, completes and the workspace
holds every page once."""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from pytest_django import Settings

from resources.models import Resource, Source, SourceRun
from resources.sources import services
from tests.conftest import Tenant
from tests.resources.fixture_site import Site, page, serving
from tests.worker import purge_queue, stop_process, worker_process

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

PAGES = 200
WORKER_ENV = {
    "OUTBOUND_ALLOW_PRIVATE": "true",  # the fixture site is on 127.0.0.1
    "SOURCES_REQUEST_DELAY_MS": "25",  # 200 pages: at least five seconds of fetching
}


@pytest.fixture
def site(settings: Settings) -> Iterator[Site]:
    settings.OUTBOUND_ALLOW_PRIVATE = True
    with serving(Site(pages={f"/p/{n}": page(n) for n in range(PAGES)})) as running:
        yield running


def _until(condition: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def _run(run_id: uuid.UUID) -> SourceRun:
    return SourceRun.objects.get(pk=run_id)


def test_a_worker_killed_mid_sync_leaves_no_run_running_and_the_next_run_completes(
    owner: Tenant, site: Site, settings: Settings, tmp_path: Path
) -> None:
    purge_queue()
    fields = services.SourceFields(kind="sitemap", urls=[site.url("/sitemap.xml")], max_pages=PAGES)
    source: Source = services.source_create(workspace=owner.workspace, fields=fields)
    worker = worker_process(env=WORKER_ENV, log=tmp_path / "worker-1.log")
    try:
        first = services.source_sync_start(source=source)  # queued on commit
        _until(lambda: _run(first.id).executor is not None, timeout=120)
        _until(lambda: len([p for p, _ in site.requests if p.startswith("/p/")]) >= 20, timeout=60)
        os.kill(worker.pid, signal.SIGKILL)  # mid-run: pages are being fetched
        worker.wait()
        fetched = len([p for p, _ in site.requests if p.startswith("/p/")])
        assert fetched < PAGES, "the run ended before the kill"
        killed = _run(first.id)
        assert killed.status == "running"  # nobody is left to finish it...
        later = timezone.now() + timedelta(seconds=settings.SOURCES_RUN_STALE_SECONDS + 1)
        assert services.sources_sweep(now=later) == (1, 0)  # ...until the sweep finds it stale
        killed.refresh_from_db()
        assert killed.status == "failed" and "lost" in killed.error
        worker = worker_process(env=WORKER_ENV, log=tmp_path / "worker-2.log")
        second = services.source_sync_start(source=source)
        _until(lambda: _run(second.id).status != "running", timeout=240)
        done = _run(second.id)
        assert done.status == "completed", done.error
        assert not SourceRun.objects.filter(source=source, status="running").exists()
        pages = Resource.objects.filter(workspace=owner.workspace, external_id__startswith=site.url("/p/"))
        assert pages.count() == PAGES
        assert done.new + done.changed + done.unchanged == PAGES
    finally:
        stop_process(worker)
        purge_queue()
