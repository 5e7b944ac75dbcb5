"""One running run per source, under races: two syncs started at once (one
runs, the other is refused), and the same run's task delivered to a second
worker while the first still carries it out (Redis hands an unacknowledged
task on after the broker's visibility timeout, an hour: a long sync): the
second does nothing while the first's heartbeat is fresh, and takes the run
over, from where the first's last heartbeat left it, once it is stale."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone
from pytest_django import Settings

from resources.models import Resource, Source, SourceRun, SourceRunStatus
from resources.sources import progress, services
from resources.sources.run import run_claim, source_run_execute
from tests.conftest import Tenant
from tests.resources.fixture_site import Site, allow_local_site, page, serving

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def local_site_allowed(settings: Settings) -> None:
    allow_local_site(settings)


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
    first = run_claim(run.id)  # the first worker holds the run, its heartbeat fresh
    assert first is not None
    assert source_run_execute(run.id) is None  # the second delivery: nothing done
    run.refresh_from_db()
    assert run.status == SourceRunStatus.RUNNING and run.new == 0 and run.executor == first
    assert not Resource.objects.filter(workspace=owner.workspace).exists()


def test_the_first_worker_stops_when_its_run_was_taken_over(
    owner: Tenant, site: Site, settings: Settings
) -> None:
    """A worker silent past SOURCES_RUN_STALE_SECONDS is taken for lost: a new
    delivery takes the run over and carries it out once; the old claim is void."""
    source = _source(owner, site)
    run = services.source_sync_start(source=source)
    first = run_claim(run.id)
    stale = timezone.now() - timedelta(seconds=settings.SOURCES_RUN_STALE_SECONDS + 1)
    SourceRun.objects.filter(pk=run.pk).update(heartbeat_at=stale)
    done = source_run_execute(run.id)
    assert done is not None and (done.status, done.new) == (SourceRunStatus.COMPLETED, 5)
    assert done.executor not in (None, first)
    assert source_run_execute(run.id) is None  # a late copy finds it finished
    assert Resource.objects.filter(workspace=owner.workspace).count() == 5


def test_a_run_taken_over_mid_way_goes_on_from_its_last_heartbeat_counting_nothing_twice(
    owner: Tenant, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first worker hangs on a page after its heartbeat saved three
    pages done; a later delivery takes the run over and goes on from the
    fourth, so each page is counted once."""
    settings.SOURCES_FETCH_TIMEOUT_SECONDS = 10
    monkeypatch.setattr(progress, "HEARTBEAT_SECONDS", 0.0)  # a heartbeat after every page
    with serving(Site(pages={f"/p/{n}": page(n) for n in range(5)}, trickle={"/p/3": "headers"})) as site:
        run = services.source_sync_start(source=_source(owner, site))
        outcome: list[SourceRun | None] = []

        def first_worker() -> None:
            try:
                outcome.append(source_run_execute(run.id))
            finally:
                connections.close_all()

        thread = threading.Thread(target=first_worker)
        thread.start()
        deadline = time.monotonic() + 30
        while "/p/3" not in [path for path, _ in site.requests]:
            assert time.monotonic() < deadline, "the first worker never reached /p/3"
            time.sleep(0.05)
        saved = SourceRun.objects.get(pk=run.pk)
        assert (saved.cursor, saved.new) == (3, 3)
        stale = timezone.now() - timedelta(seconds=settings.SOURCES_RUN_STALE_SECONDS + 1)
        SourceRun.objects.filter(pk=run.pk).update(heartbeat_at=stale)  # the first worker looks lost
        del site.trickle["/p/3"]
        done = source_run_execute(run.id)
        thread.join(timeout=30)
    assert done is not None and (done.status, done.new, done.unchanged) == (SourceRunStatus.COMPLETED, 5, 0)
    assert outcome == [None]  # the first worker, woken, found its claim gone
    assert Resource.objects.filter(workspace=owner.workspace).count() == 5
