"""The resource endpoints: scopes, tenancy, limits, envelope. No worker here:
with the ``db`` fixture nothing is committed, so nothing is enqueued."""

from __future__ import annotations

import io
import uuid
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django import Settings
from rest_framework.test import APIClient

from resources.models import Resource, ResourceStatus
from retrieval.models import Passage
from retrieval.passage_analysis import passage_analysis
from tests.conftest import Tenant, api_client
from tests.factories import WorkspaceFactory
from tests.resources.files import make_docx, make_pdf
from workspaces import services as workspace_services
from workspaces.models import ApiKeyScope

pytestmark = pytest.mark.django_db


def _url(workspace_id: uuid.UUID | str, suffix: str = "") -> str:
    return f"/api/v1/workspaces/{workspace_id}/resources/{suffix}"


def _upload(client: APIClient, workspace_id: uuid.UUID | str, name: str, data: bytes, **extra: Any) -> Any:
    return client.post(
        _url(workspace_id), {"file": SimpleUploadedFile(name, data), **extra}, format="multipart"
    )


def _resource(tenant: Tenant, text: str = "hello world") -> Resource:
    response = tenant.client().post(_url(tenant.workspace.id), {"title": "T", "text": text}, format="json")
    assert response.status_code == 202, response.json()
    return Resource.objects.get(pk=response.json()["data"]["id"])


def _add_passages(resource: Resource, count: int) -> None:
    Passage.objects.bulk_create(
        Passage(
            workspace_id=resource.workspace_id,
            resource=resource,
            ordinal=i,
            text=f"passage {i}",
            char_start=i * 10,
            char_end=i * 10 + 9,
            token_count=2,
            embedding=[0.0] * 383 + [1.0],
            embedding_model="test",
            **passage_analysis(f"passage {i}"),
        )
        for i in reversed(range(count))
    )


# --- upload -----------------------------------------------------------------


def test_upload_answers_202_with_a_pending_resource(owner: Tenant) -> None:
    response = _upload(
        owner.client(), owner.workspace.id, "guide.md", b"# Guide\n\nSome text.", title="My guide"
    )
    assert response.status_code == 202
    data = response.json()["data"]
    assert data["status"] == "pending" and data["error"] is None
    assert data["title"] == "My guide" and data["filename"] == "guide.md"
    assert data["content_type"] == "text/markdown"
    assert data["size_bytes"] == 19 and len(data["sha256"]) == 64
    assert data["passage_count"] == 0
    assert (data["metadata"], data["access"]) == ({}, None)
    assert set(data) == {
        "id", "title", "filename", "content_type", "size_bytes", "sha256", "status", "error",
        "passage_count", "metadata", "access", "external_id", "version", "created_at", "updated_at",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("report.bin", make_pdf(["Hello"]), "application/pdf"),
        (
            "letter",
            make_docx([("p", "Dear reader")]),
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        ),
        ("page.txt", b"<!DOCTYPE html><html><body><p>Hi</p></body></html>", "text/html"),
        ("notes.pdf", b"plain words, whatever the name says", "text/plain"),
    ],
)
def test_type_is_detected_from_the_bytes_not_the_name(
    owner: Tenant, name: str, data: bytes, expected: str
) -> None:
    response = _upload(owner.client(), owner.workspace.id, name, data)
    assert response.status_code == 202
    assert response.json()["data"]["content_type"] == expected


def test_json_text_upload(owner: Tenant) -> None:
    response = owner.client().post(
        _url(owner.workspace.id), {"title": "FAQ", "text": "Q: why?\nA: because."}, format="json"
    )
    assert response.status_code == 202
    data = response.json()["data"]
    assert (data["title"], data["content_type"], data["filename"]) == ("FAQ", "text/plain", "")


def test_json_upload_without_text_is_a_validation_error(owner: Tenant) -> None:
    response = owner.client().post(_url(owner.workspace.id), {"title": "x"}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"
    assert "text" in response.json()["error"]["fields"]


def test_same_bytes_twice_returns_the_existing_resource_with_200(owner: Tenant) -> None:
    first = _upload(owner.client(), owner.workspace.id, "a.txt", b"same bytes")
    second = _upload(owner.client(), owner.workspace.id, "b.txt", b"same bytes", title="other")
    assert (first.status_code, second.status_code) == (202, 200)
    assert second.json()["data"]["id"] == first.json()["data"]["id"]
    assert Resource.objects.filter(workspace=owner.workspace).count() == 1


def test_same_bytes_in_another_workspace_is_a_new_resource(owner: Tenant) -> None:
    other = WorkspaceFactory.create(organization=owner.organization)
    assert _upload(owner.client(), owner.workspace.id, "a.txt", b"shared").status_code == 202
    assert _upload(owner.client(), other.id, "a.txt", b"shared").status_code == 202


def test_unsupported_type_is_415_listing_accepted_types(owner: Tenant) -> None:
    gif = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00"
    response = _upload(owner.client(), owner.workspace.id, "image.txt", gif)
    assert response.status_code == 415
    error = response.json()["error"]
    assert error["code"] == "unsupported_media_type"
    for name in (
        "text/plain",
        "text/markdown",
        "text/html",
        "application/pdf",
        "DOCX",
        "XLSX",
        "text/csv",
        "image/png",
    ):
        assert name in error["message"]
    assert not Resource.objects.exists()


def test_zip_that_is_not_docx_is_415(owner: Tenant) -> None:
    buffer = io.BytesIO()
    import zipfile

    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("hello.txt", "hi")
    response = _upload(owner.client(), owner.workspace.id, "a.zip", buffer.getvalue())
    assert response.status_code == 415


def test_upload_over_the_limit_is_413(owner: Tenant, settings: Settings) -> None:
    settings.MAX_UPLOAD_BYTES = 2048
    response = _upload(owner.client(), owner.workspace.id, "big.txt", b"a" * 3000)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
    assert "2,048" in response.json()["error"]["message"]
    assert not Resource.objects.exists()


def test_body_over_the_limit_is_refused_from_its_content_length(owner: Tenant, settings: Settings) -> None:
    settings.MAX_UPLOAD_BYTES = 2048
    response = _upload(owner.client(), owner.workspace.id, "big.txt", b"a" * (200 * 1024))
    assert response.status_code == 413
    assert response.json() == {"status": "error", "error": response.json()["error"]}


# --- list, get, passages ----------------------------------------------------------


def test_list_filters_by_status_and_paginates_newest_first(owner: Tenant) -> None:
    resources = [_resource(owner, f"text {i}") for i in range(3)]
    Resource.objects.filter(pk=resources[0].pk).update(status=ResourceStatus.READY)
    client = owner.client("chat")

    ready = client.get(_url(owner.workspace.id), {"status": "ready"}).json()["data"]
    assert [r["id"] for r in ready["items"]] == [str(resources[0].id)]

    page = client.get(_url(owner.workspace.id), {"limit": 2}).json()["data"]
    assert [r["id"] for r in page["items"]] == [str(resources[2].id), str(resources[1].id)]
    rest = client.get(_url(owner.workspace.id), {"limit": 2, "cursor": page["next_cursor"]}).json()["data"]
    assert [r["id"] for r in rest["items"]] == [str(resources[0].id)]
    assert rest["next_cursor"] is None


def test_list_with_unknown_status_is_400(owner: Tenant) -> None:
    response = owner.client().get(_url(owner.workspace.id), {"status": "done"})
    assert response.status_code == 400
    assert "status" in response.json()["error"]["fields"]


def test_passages_are_listed_in_order_and_paginated(owner: Tenant) -> None:
    resource = _resource(owner)
    _add_passages(resource, 5)
    client = owner.client("chat")
    first = client.get(_url(owner.workspace.id, f"{resource.id}/passages/"), {"limit": 3}).json()["data"]
    assert [p["ordinal"] for p in first["items"]] == [0, 1, 2]
    assert first["items"][0]["text"] == "passage 0"
    assert "embedding" not in first["items"][0]
    second = client.get(
        _url(owner.workspace.id, f"{resource.id}/passages/"), {"limit": 3, "cursor": first["next_cursor"]}
    ).json()["data"]
    assert [p["ordinal"] for p in second["items"]] == [3, 4]


def test_failed_resource_shows_its_error(owner: Tenant) -> None:
    resource = _resource(owner)
    Resource.objects.filter(pk=resource.pk).update(
        status=ResourceStatus.FAILED,
        error_code="pdf_encrypted",
        error_message="The PDF is password-protected.",
    )
    data = owner.client("chat").get(_url(owner.workspace.id, f"{resource.id}/")).json()["data"]
    assert data["error"] == {"code": "pdf_encrypted", "message": "The PDF is password-protected."}


# --- delete, reingest ----------------------------------------------------------------


def test_delete_removes_the_resource_and_its_passages(owner: Tenant) -> None:
    resource = _resource(owner)
    _add_passages(resource, 3)
    response = owner.client().delete(_url(owner.workspace.id, f"{resource.id}/"))
    assert response.status_code == 204
    assert not Resource.objects.filter(pk=resource.pk).exists()
    assert not Passage.objects.filter(resource_id=resource.pk).exists()


def test_reingest_of_a_failed_resource_puts_it_back_to_pending(owner: Tenant) -> None:
    resource = _resource(owner)
    Resource.objects.filter(pk=resource.pk).update(
        status=ResourceStatus.FAILED, error_code="ingest_failed", error_message="x", attempts=4
    )
    response = owner.client().post(_url(owner.workspace.id, f"{resource.id}/reingest/"))
    assert response.status_code == 202
    assert response.json()["data"]["status"] == "pending"
    assert response.json()["data"]["error"] is None
    resource.refresh_from_db()
    assert resource.attempts == 0 and resource.ingest_heartbeat_at is not None


def test_reingest_of_a_ready_resource_keeps_it_ready(owner: Tenant) -> None:
    resource = _resource(owner)
    Resource.objects.filter(pk=resource.pk).update(status=ResourceStatus.READY, ingest_heartbeat_at=None)
    response = owner.client().post(_url(owner.workspace.id, f"{resource.id}/reingest/"))
    assert response.status_code == 202
    assert response.json()["data"]["status"] == "ready"


# --- scopes and tenancy ----------------------------------------------------------------


def _all_operations(
    workspace_id: uuid.UUID | str, resource_id: uuid.UUID | str
) -> list[tuple[str, str, dict[str, Any] | None]]:
    return [
        ("get", _url(workspace_id), None),
        ("post", _url(workspace_id), {"title": "x", "text": "new text"}),
        ("get", _url(workspace_id, f"{resource_id}/"), None),
        ("delete", _url(workspace_id, f"{resource_id}/"), None),
        ("post", _url(workspace_id, f"{resource_id}/reingest/"), None),
        ("get", _url(workspace_id, f"{resource_id}/passages/"), None),
    ]


def _call(client: APIClient, method: str, url: str, body: dict[str, Any] | None) -> Any:
    return getattr(client, method)(url, body, format="json") if body else getattr(client, method)(url)


@pytest.mark.parametrize("scope", ["admin", "chat"])
def test_outsider_gets_404_on_every_endpoint(owner: Tenant, outsider: Tenant, scope: str) -> None:
    resource = _resource(owner)
    client = outsider.client(scope)
    for method, url, body in _all_operations(owner.workspace.id, resource.id):
        response = _call(client, method, url, body)
        assert response.status_code == 404, (method, url, response.status_code)
        assert response.json()["error"]["code"] == "not_found"
    assert Resource.objects.filter(pk=resource.pk, status=ResourceStatus.PENDING).exists()


@pytest.mark.parametrize("scope", [ApiKeyScope.ADMIN, ApiKeyScope.CHAT])
def test_key_limited_to_another_workspace_gets_404(owner: Tenant, scope: str) -> None:
    resource = _resource(owner)
    elsewhere = WorkspaceFactory.create(organization=owner.organization)
    issued = workspace_services.api_key_create(
        organization=owner.organization, name="limited", scope=scope, workspace_ids=[elsewhere.id]
    )
    client = api_client(issued.plaintext)
    for method, url, body in _all_operations(owner.workspace.id, resource.id):
        assert _call(client, method, url, body).status_code == 404, (method, url)


def test_resource_of_another_workspace_is_404(owner: Tenant) -> None:
    resource = _resource(owner)
    other = WorkspaceFactory.create(organization=owner.organization)
    for method, url, body in _all_operations(other.id, resource.id)[2:]:
        assert _call(owner.client(), method, url, body).status_code == 404, (method, url)
    assert Resource.objects.filter(pk=resource.pk).exists()


def test_unknown_resource_is_404(owner: Tenant) -> None:
    response = owner.client().get(_url(owner.workspace.id, f"{uuid.uuid4()}/"))
    assert response.status_code == 404


def test_chat_key_reads_but_cannot_write(owner: Tenant) -> None:
    resource = _resource(owner)
    chat = owner.client("chat")
    assert chat.get(_url(owner.workspace.id)).status_code == 200
    assert chat.get(_url(owner.workspace.id, f"{resource.id}/")).status_code == 200
    assert chat.get(_url(owner.workspace.id, f"{resource.id}/passages/")).status_code == 200
    for response in (
        _upload(chat, owner.workspace.id, "a.txt", b"text"),
        chat.post(_url(owner.workspace.id), {"text": "text"}, format="json"),
        chat.delete(_url(owner.workspace.id, f"{resource.id}/")),
        chat.post(_url(owner.workspace.id, f"{resource.id}/reingest/")),
    ):
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "forbidden"
    assert Resource.objects.filter(workspace=owner.workspace).count() == 1


def test_missing_key_is_401(owner: Tenant) -> None:
    assert api_client(None).get(_url(owner.workspace.id)).status_code == 401


def test_two_uploads_racing_with_the_same_bytes_give_one_resource(
    owner: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    from resources import services

    first = _upload(owner.client(), owner.workspace.id, "a.txt", b"raced bytes")
    real = services._same_content
    calls: list[int] = []

    def blind_first_time(**kwargs: Any) -> Any:
        # The other request's row is not visible yet at our first check.
        calls.append(1)
        return None if len(calls) == 1 else real(**kwargs)

    monkeypatch.setattr(services, "_same_content", blind_first_time)
    second = _upload(owner.client(), owner.workspace.id, "b.txt", b"raced bytes")
    assert second.status_code == 200
    assert second.json()["data"]["id"] == first.json()["data"]["id"]
    assert len(calls) == 2
    assert Resource.objects.filter(workspace=owner.workspace).count() == 1


def test_upload_succeeds_when_the_broker_is_down(owner: Tenant, monkeypatch: pytest.MonkeyPatch) -> None:
    from django.test import TestCase

    from resources import tasks

    def broker_down(*args: Any, **kwargs: Any) -> None:
        raise ConnectionError("broker unreachable")

    monkeypatch.setattr(tasks, "queue_waiting", broker_down)
    monkeypatch.setattr(tasks.ingest_next, "delay", broker_down)
    with TestCase.captureOnCommitCallbacks(execute=True):
        response = _upload(owner.client(), owner.workspace.id, "a.txt", b"queued later by the sweep")
    assert response.status_code == 202
    resource = Resource.objects.get(pk=response.json()["data"]["id"])
    assert resource.status == ResourceStatus.PENDING and resource.ingest_heartbeat_at is not None
