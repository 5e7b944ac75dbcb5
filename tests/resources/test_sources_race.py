"""One running run per source, under races: two syncs started at once (one
runs, the other is refused), and the same run's task delivered to a second
worker while the first still carries it out (Redis hands an unacknowledged
task on after the broker's visibility timeout, an hour: a long sync): the
second does nothing."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from django.db import connections
from pytest_django import Settings

from resources.models import Resource, Source, SourceRun, SourceRunStatus
from resources.sources import services
from resources.sources.run import run_executing, source_run_execute
from tests.conftest import Tenant
from tests.resources.fixture_site import Site, page, serving

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def local_site_allowed(settings: Settings) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE = True  # the fixture site is on 127.0.0.1
    settings.SOURCES_REQUEST_DELAY_MS = 0


@pytest.fixture
def site() -> Iterator[Site]:
    with serving(Site(pages={f"/p/{n}": page(n) for n in range(5)})) as running:
        yield running


def _source(owner: Tenant, site: Site) -> Source:
    fields = services.SourceFields(kind="sitemap", urls=[site.url("/sitemap.xml")], max_pages=10)
    return services.source_create(workspace=owner.workspace, fields=fields)


def test_two_syncs_started_at_once_one_runs_the_other_is_refused(owner: Tenant, site: Site) -> None:
    source = _source(owner, site)
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def start() -> None:
        try:
            barrier.wait(timeout=10)
            services.source_sync_start(source=source)
            outcomes.append("started")
        except services.SyncRunning:
            outcomes.append("refused")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=start) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(outcomes) == ["refused", "started"]
    assert SourceRun.objects.filter(source=source, status=SourceRunStatus.RUNNING).count() == 1


def test_a_run_delivered_again_while_it_runs_does_nothing(owner: Tenant, site: Site) -> None:
    source = _source(owner, site)
    run = services.source_sync_start(source=source)
    holding, release = threading.Event(), threading.Event()

    def first_worker() -> None:  # holds the run as a worker carrying it out does
        try:
            with run_executing(run.id) as held:
                assert held
                holding.set()
                release.wait(timeout=60)
        finally:
            connections.close_all()

    thread = threading.Thread(target=first_worker)
    thread.start()
    assert holding.wait(timeout=10)
    try:
        assert source_run_execute(run.id) is None  # the second delivery: nothing done
        run.refresh_from_db()
        assert run.status == SourceRunStatus.RUNNING and run.new == 0
        assert not Resource.objects.filter(workspace=owner.workspace).exists()
    finally:
        release.set()
        thread.join(timeout=30)
    done = source_run_execute(run.id)  # the lock went with the first: the run is carried out once
    assert done is not None and (done.status, done.new) == (SourceRunStatus.COMPLETED, 5)
    assert source_run_execute(run.id) is None  # and a late copy finds it finished
