"""The web sources API: create, read, change, delete, start a run and list
runs (admin keys); bad input is a 400 naming the field, a second run while
one runs a 409, another organization's source a 404."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pytest_django import Settings

from resources.models import SourceRun
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db

Capture = Callable[..., Any]


@pytest.fixture(autouse=True)
def public_only(settings: Settings) -> None:
    settings.OUTBOUND_ALLOW_PRIVATE = False


def _url(tenant: Tenant, suffix: str = "") -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/sources/{suffix}"


def _create(tenant: Tenant, **body: Any) -> Any:
    body = {"kind": "sitemap", "urls": ["https://example.com/sitemap.xml"], **body}
    return tenant.client().post(_url(tenant), body, format="json")


def test_a_source_is_created_read_changed_listed_and_deleted(owner: Tenant) -> None:
    created = _create(owner, schedule_seconds=3600, max_pages=50)
    assert created.status_code == 201, created.json()
    source = created.json()["data"]
    assert source["kind"] == "sitemap" and source["schedule_seconds"] == 3600
    assert (source["max_pages"], source["same_host"], source["max_delete_percent"]) == (50, True, 50)
    assert source["last_run"] is None and source["last_run_at"] is None
    client = owner.client()
    assert client.get(_url(owner, f"{source['id']}/")).json()["data"]["id"] == source["id"]
    changed = client.patch(
        _url(owner, f"{source['id']}/"), {"schedule_seconds": None, "max_delete_percent": 20}, format="json"
    )
    assert changed.status_code == 200, changed.json()
    assert (changed.json()["data"]["schedule_seconds"], changed.json()["data"]["max_delete_percent"]) == (
        None,
        20,
    )
    listed = client.get(_url(owner)).json()["data"]
    assert [item["id"] for item in listed["items"]] == [source["id"]]
    assert client.delete(_url(owner, f"{source['id']}/")).status_code == 204
    assert client.get(_url(owner, f"{source['id']}/")).status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kind": "feed"}, "kind"),
        ({"urls": []}, "urls"),
        ({"urls": "https://example.com/"}, "urls"),
        ({"urls": ["ftp://example.com/"]}, "urls[0]"),
        ({"urls": ["https://user:pw@example.com/"]}, "urls[0]"),
        ({"urls": ["https://a.example/", "https://b.example/"]}, "urls"),
        ({"urls": ["https://example.com/" + "a" * 300]}, "urls[0]"),
        ({"schedule_seconds": 10}, "schedule_seconds"),
        ({"max_pages": 0}, "max_pages"),
        ({"max_delete_percent": 101}, "max_delete_percent"),
        ({"same_host": "maybe"}, "same_host"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(owner: Tenant, body: dict[str, Any], field: str) -> None:
    answer = _create(owner, **body)
    assert answer.status_code == 400, answer.json()
    assert answer.json()["error"]["code"] == "validation_error"
    assert field in answer.json()["error"]["fields"], answer.json()


def test_a_sync_is_started_once_and_listed_with_its_counts(
    owner: Tenant, django_capture_on_commit_callbacks: Capture
) -> None:
    source = _create(owner).json()["data"]
    client = owner.client()
    with django_capture_on_commit_callbacks() as queued:
        started = client.post(_url(owner, f"{source['id']}/sync/"))
    assert started.status_code == 202, started.json()
    run = started.json()["data"]
    assert run["status"] == "running" and run["new"] == 0
    assert len(queued) == 1  # the run's task, after commit
    again = client.post(_url(owner, f"{source['id']}/sync/"))
    assert (again.status_code, again.json()["error"]["code"]) == (409, "sync_running")
    SourceRun.objects.filter(pk=run["id"]).update(status="partial", new=3, failed=1)
    runs = client.get(_url(owner, f"{source['id']}/runs/")).json()["data"]["items"]
    assert [(r["id"], r["status"], r["new"], r["failed"]) for r in runs] == [(run["id"], "partial", 3, 1)]
    shown = client.get(_url(owner, f"{source['id']}/")).json()["data"]
    assert shown["last_run"]["id"] == run["id"] and shown["last_run_at"] is not None


def test_another_organizations_source_is_404_and_chat_keys_are_403(owner: Tenant, outsider: Tenant) -> None:
    theirs = _create(outsider).json()["data"]
    client = owner.client()
    for method, suffix in (
        ("get", f"{theirs['id']}/"),
        ("patch", f"{theirs['id']}/"),
        ("delete", f"{theirs['id']}/"),
        ("post", f"{theirs['id']}/sync/"),
        ("get", f"{theirs['id']}/runs/"),
    ):
        assert getattr(client, method)(_url(owner, suffix), {}, format="json").status_code == 404
    assert owner.client("chat").get(_url(owner)).status_code == 403
    assert SourceRun.objects.count() == 0
