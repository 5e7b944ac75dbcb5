"""Web sources through the one way out (daneshyar/outbound/): a page that
trickles its headers or its body is given up at SOURCES_FETCH_TIMEOUT_SECONDS
(± 2 s) and the sync goes on with the next page; 6to4 and site-local
addresses refused at creation and at fetch time; the per-workspace bounds
(sources a workspace holds, pages one run fetches)."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_django import Settings

from resources.models import Resource, Source, SourceRun
from resources.sources import services
from resources.sources.run import source_run_execute
from tests.conftest import Tenant
from tests.resources.fixture_site import Site, allow_local_site, page, serving

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def local_site_allowed(settings: Settings) -> None:
    allow_local_site(settings)
    settings.SOURCES_FETCH_TIMEOUT_SECONDS = 3


def _sync(source: Source) -> SourceRun:
    run = services.source_sync_start(source=source)
    done = source_run_execute(run.id)
    assert done is not None
    return done


def _counts(run: SourceRun) -> dict[str, int]:
    names = ("new", "changed", "unchanged", "deleted", "failed", "skipped")
    return {name: getattr(run, name) for name in names if getattr(run, name)}


def _sitemap_source(tenant: Tenant, site: Site, **fields: Any) -> Source:
    fields = {"max_pages": 100, **fields}
    return services.source_create(
        workspace=tenant.workspace,
        fields=services.SourceFields(kind="sitemap", urls=[site.url("/sitemap.xml")], **fields),
    )


def test_a_trickling_page_is_given_up_at_its_deadline_and_the_sync_goes_on(owner: Tenant) -> None:
    """A byte a second, in the headers (/p/1) or in the body (/p/2): each is
    a failed page after 3 s (± 2 s), and the next page is fetched at once."""
    pages = {f"/p/{n}": page(n) for n in range(4)}
    with serving(Site(pages=pages, trickle={"/p/1": "headers", "/p/2": "body"})) as site:
        run = _sync(_sitemap_source(owner, site))
        asked = dict(zip([path for path, _ in site.requests], site.times, strict=True))
    assert (run.status, _counts(run)) == ("partial", {"new": 2, "failed": 2})
    for slow, following in (("/p/1", "/p/2"), ("/p/2", "/p/3")):
        assert abs(asked[following] - asked[slow] - 3.0) < 2.0, (slow, asked[following] - asked[slow])
    stored = Resource.objects.filter(workspace=owner.workspace).values_list("external_id", flat=True)
    assert sorted(stored) == [site.url("/p/0"), site.url("/p/3")]


@pytest.mark.parametrize("host", ["2002:7f00:1::", "fec0::1"])
def test_6to4_and_site_local_addresses_are_refused_at_creation_and_at_fetch(
    owner: Tenant, settings: Settings, host: str
) -> None:
    url = f"http://[{host}]/handbook"
    # Created while the deployment allowed private addresses...
    fields = services.SourceFields(kind="page", urls=[url])
    source = services.source_create(workspace=owner.workspace, fields=fields)
    settings.OUTBOUND_ALLOW_PRIVATE = False
    answer = owner.client().post(
        f"/api/v1/workspaces/{owner.workspace.id}/sources/", {"kind": "page", "urls": [url]}, format="json"
    )
    assert answer.status_code == 400, answer.json()
    assert "loopback, private" in answer.json()["error"]["fields"]["urls[0]"][0]
    # ...and synced once it no longer does: every request is checked again.
    run = _sync(source)
    assert (run.status, run.new) == ("failed", 0)
    assert "loopback, private, link-local or reserved" in run.error


def test_a_workspace_holds_at_most_its_quota_of_sources(
    owner: Tenant, outsider: Tenant, settings: Settings
) -> None:
    settings.SOURCES_PER_WORKSPACE = 2
    url = f"/api/v1/workspaces/{owner.workspace.id}/sources/"
    body = {"kind": "page", "urls": ["http://127.0.0.1:9/a"]}
    created = [owner.client().post(url, body, format="json") for _ in range(2)]
    assert [answer.status_code for answer in created] == [201, 201]
    refused = owner.client().post(url, body, format="json")
    assert refused.status_code == 429, refused.json()
    assert refused.json()["error"]["code"] == "quota_exceeded"
    assert "SOURCES_PER_WORKSPACE" in refused.json()["error"]["message"]
    assert int(refused["Retry-After"]) > 0
    assert Source.objects.filter(workspace=owner.workspace).count() == 2
    # Another workspace's sources are its own; a deleted source frees its place.
    other = f"/api/v1/workspaces/{outsider.workspace.id}/sources/"
    assert outsider.client().post(other, body, format="json").status_code == 201
    first = created[0].json()["data"]["id"]
    assert owner.client().delete(f"{url}{first}/").status_code == 204
    assert owner.client().post(url, body, format="json").status_code == 201


def test_pages_per_run_are_capped_by_the_setting(owner: Tenant, settings: Settings) -> None:
    with serving(Site(pages={f"/p/{n}": page(n) for n in range(5)})) as site:
        source = _sitemap_source(owner, site, max_pages=4)
        settings.SOURCES_MAX_PAGES = 3  # lowered after the source was made: it bounds it too
        assert _counts(_sync(source)) == {"new": 3, "skipped": 2}
    answer = owner.client().post(
        f"/api/v1/workspaces/{owner.workspace.id}/sources/",
        {"kind": "page", "urls": ["http://127.0.0.1:9/a"], "max_pages": 100_001},
        format="json",
    )
    assert answer.status_code == 400 and "max_pages" in answer.json()["error"]["fields"]
