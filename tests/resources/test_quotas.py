"""Quotas of an organization (documents, stored bytes) on every upload
route, checked before anything is written; and the upload rate limit
counting documents, not requests. Real PostgreSQL and Redis; no worker
(with the ``db`` fixture nothing commits, so nothing is queued)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from pytest_django import Settings

from daneshyar.exceptions import ApplicationError
from resources import services
from resources.models import Resource
from tests.conftest import Tenant
from tests.resources.files import make_zip
from tests.staff import Staff, make_staff

pytestmark = pytest.mark.django_db


def _url(tenant: Tenant, batch: bool = False) -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/resources/{'batch/' if batch else ''}"


def _text(tenant: Tenant, text: str) -> Any:
    return tenant.client().post(_url(tenant), {"text": text}, format="json")


def _file(tenant: Tenant, name: str, data: bytes) -> Any:
    return tenant.client().post(_url(tenant), {"file": SimpleUploadedFile(name, data)}, format="multipart")


def _batch(tenant: Tenant, texts: list[str]) -> Any:
    return tenant.client().post(_url(tenant, batch=True), [{"text": t} for t in texts], format="json")


def _refused(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.json()
    body = response.json()
    assert body["status"] == "error"
    error: dict[str, Any] = body["error"]
    assert error["code"] == "quota_exceeded"
    return error


def test_the_documents_quota_answers_429_on_every_route_and_writes_nothing(
    owner: Tenant, outsider: Tenant, settings: Settings
) -> None:
    settings.ORG_QUOTA_DOCUMENTS = 2
    assert _text(owner, "first").status_code == 202
    assert _file(owner, "second.txt", b"second").status_code == 202
    error = _refused(_text(owner, "third"), 429)
    assert "2 of its 2 documents" in error["message"] and "adds 1" in error["message"]
    assert (error["quota"], error["limit"], error["used"]) == ("documents", "2", "2")
    assert _text(owner, "third")["Retry-After"] == "3600"
    _refused(_file(owner, "third.txt", b"third"), 429)
    _refused(_batch(owner, ["third", "fourth"]), 429)
    zipped = owner.client().post(
        _url(owner, batch=True), make_zip({"a.txt": b"a"}), content_type="application/zip"
    )
    _refused(zipped, 429)
    assert Resource.objects.filter(workspace=owner.workspace).count() == 2
    # The same bytes again is the existing resource, not a new document.
    assert _text(owner, "first").status_code == 200
    # Another organization has a quota of its own.
    assert _text(outsider, "theirs").status_code == 202


def test_a_batch_that_would_pass_the_quota_is_refused_whole(owner: Tenant, settings: Settings) -> None:
    settings.ORG_QUOTA_DOCUMENTS = 3
    assert _text(owner, "one").status_code == 202
    error = _refused(_batch(owner, ["two", "three", "four"]), 429)
    assert "1 of its 3 documents" in error["message"] and "adds 3" in error["message"]
    assert Resource.objects.count() == 1
    # Copies within the batch and documents already stored do not count.
    response = _batch(owner, ["one", "two", "two", "three"])
    assert response.status_code == 202 and response.json()["data"]["created"] == 2


def test_the_bytes_quota_answers_413_with_the_limit_and_the_usage(owner: Tenant, settings: Settings) -> None:
    settings.ORG_QUOTA_BYTES = 1000
    assert _file(owner, "a.txt", b"a" * 600).status_code == 202
    error = _refused(_file(owner, "b.txt", b"b" * 500), 413)
    assert "600 of its 1,000 bytes" in error["message"] and "adds 500" in error["message"]
    assert (error["quota"], error["limit"], error["used"]) == ("bytes", "1000", "600")
    _refused(_batch(owner, ["c" * 300, "d" * 300]), 413)
    assert _file(owner, "c.txt", b"c" * 400).status_code == 202  # exactly full
    assert Resource.objects.count() == 2


def test_deleting_documents_frees_the_quota(owner: Tenant, settings: Settings) -> None:
    settings.ORG_QUOTA_DOCUMENTS = 1
    first = _text(owner, "first").json()["data"]["id"]
    _refused(_text(owner, "second"), 429)
    assert owner.client().delete(f"{_url(owner)}{first}/").status_code == 204
    assert _text(owner, "second").status_code == 202


def test_an_organizations_own_quota_overrides_the_setting(owner: Tenant, settings: Settings) -> None:
    settings.ORG_QUOTA_DOCUMENTS = 1
    owner.organization.quota_documents = 3
    owner.organization.save()
    assert [_text(owner, f"doc {i}").status_code for i in range(3)] == [202, 202, 202]
    _refused(_text(owner, "doc 3"), 429)
    settings.ORG_QUOTA_DOCUMENTS = 0  # no default quota; the organization's own still holds
    _refused(_text(owner, "doc 3"), 429)
    owner.organization.quota_documents = 0  # 0: no quota for this organization
    owner.organization.save()
    assert _text(owner, "doc 3").status_code == 202


@pytest.mark.django_db(transaction=True)
def test_concurrent_uploads_never_pass_the_quota(owner: Tenant, settings: Settings) -> None:
    settings.ORG_QUOTA_DOCUMENTS = 3
    start = threading.Barrier(8)
    outcomes: list[str] = []

    def upload(n: int) -> None:
        try:
            start.wait()
            services.resource_create_from_text(workspace=owner.workspace, text=f"racing {n}")
            outcomes.append("created")
        except ApplicationError as exc:
            outcomes.append(exc.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=upload, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["created"] * 3 + ["quota_exceeded"] * 5
    assert Resource.objects.count() == 3


# --- The upload rate limit counts documents ---------------------------------------


def test_a_batch_costs_one_unit_of_the_upload_limit_per_document(owner: Tenant, settings: Settings) -> None:
    # Regression: a batch of up to 1,000 documents cost one unit, like one upload.
    settings.RATE_LIMIT_UPLOADS_PER_MINUTE = 6
    assert _batch(owner, ["a", "b", "c", "d"]).status_code == 202
    refused = _batch(owner, ["e", "f", "g"])
    assert refused.status_code == 429, refused.json()
    error = refused.json()["error"]
    assert error["code"] == "rate_limited" and "counts 3" in error["message"]
    assert Resource.objects.count() == 4
    # The refused batch counted one, at the door, like any refused upload.
    assert _text(owner, "e").status_code == 202  # the one unit left
    assert _text(owner, "f").status_code == 429


def test_a_zip_costs_its_entries(owner: Tenant, settings: Settings) -> None:
    settings.RATE_LIMIT_UPLOADS_PER_MINUTE = 3
    archive = make_zip({f"{n}.txt": f"entry {n}".encode() for n in range(4)})
    response = owner.client().post(_url(owner, batch=True), archive, content_type="application/zip")
    assert response.status_code == 429, response.json()
    assert not Resource.objects.exists()


# --- Quotas in the console -------------------------------------------------------------


def _change_form(staff: Staff, tenant: Tenant, **quotas: str) -> Any:
    return staff.client.post(
        f"/admin/workspaces/organization/{tenant.organization.id}/change/",
        {"name": tenant.organization.name, **quotas},
    )


def test_staff_over_every_organization_set_its_quotas_and_its_own_staff_cannot(owner: Tenant) -> None:
    root = make_staff("root", superuser=True)
    curator = make_staff("curator", organization=owner.organization)
    assert _change_form(root, owner, quota_documents="10", quota_bytes="5000").status_code == 302
    owner.organization.refresh_from_db()
    assert (owner.organization.quota_documents, owner.organization.quota_bytes) == (10, 5000)
    page = curator.client.get(f"/admin/workspaces/organization/{owner.organization.id}/change/")
    assert page.status_code == 200 and 'name="quota_documents"' not in page.content.decode()
    _change_form(curator, owner, quota_documents="1000000", quota_bytes="")
    owner.organization.refresh_from_db()
    assert (owner.organization.quota_documents, owner.organization.quota_bytes) == (10, 5000)


def test_the_console_upload_form_shows_the_quota_error(owner: Tenant, settings: Settings) -> None:
    settings.ORG_QUOTA_DOCUMENTS = 1
    root = make_staff("root", superuser=True)
    assert _text(owner, "already there").status_code == 202
    response = root.client.post(
        "/admin/resources/resource/add/",
        {"workspace": str(owner.workspace.id), "file": SimpleUploadedFile("faq.md", b"# FAQ\n\nYes.")},
    )
    assert response.status_code == 200
    assert b"1 of its 1 documents" in response.content
    assert Resource.objects.count() == 1
