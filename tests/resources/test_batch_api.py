"""POST …/resources/batch/: many small documents in one request (JSON array,
NDJSON, a zip), each checked and deduplicated like a single upload, one 202
with an outcome per document. No worker here: with the ``db`` fixture
nothing is committed, so nothing is enqueued (tests/resources/test_batch_worker.py
runs the worker)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django import Settings

from resources.models import Resource, ResourceFile, ResourceStatus
from tests.conftest import Tenant, api_client
from tests.resources.files import make_docx, make_zip

pytestmark = pytest.mark.django_db


def _url(tenant: Tenant) -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/resources/batch/"


def _post_json(tenant: Tenant, body: Any, key: str | None = None, **extra: Any) -> Any:
    client = api_client(key) if key else tenant.client()
    return client.post(_url(tenant), body, format="json", **extra)


def _post_raw(tenant: Tenant, data: bytes, content_type: str, **extra: Any) -> Any:
    return tenant.client().post(_url(tenant), data, content_type=content_type, **extra)


def _outcomes(response: Any) -> list[str]:
    return [d["outcome"] for d in response.json()["data"]["documents"]]


# --- bodies -------------------------------------------------------------------


def test_json_array_creates_one_pending_resource_per_document(owner: Tenant) -> None:
    response = _post_json(
        owner,
        [
            {"title": "Claims", "text": "How to file a claim."},
            {"text": "Opening hours\n\nMonday to Friday."},
        ],
    )
    assert response.status_code == 202, response.json()
    data = response.json()["data"]
    assert (data["created"], data["existing"], data["rejected"]) == (2, 0, 0)
    assert [d["index"] for d in data["documents"]] == [0, 1]
    ids = [d["resource"]["id"] for d in data["documents"]]
    rows = {str(r.id): r for r in Resource.objects.filter(workspace=owner.workspace)}
    assert set(rows) == set(ids)
    assert [rows[i].title for i in ids] == ["Claims", "Opening hours"]
    assert {r.status for r in rows.values()} == {ResourceStatus.PENDING}
    assert all(r.content_type == "text/plain" and r.ingest_heartbeat_at for r in rows.values())
    assert bytes(ResourceFile.objects.get(resource_id=ids[0]).data) == b"How to file a claim."
    assert data["documents"][0]["error"] is None and data["documents"][0]["name"] is None


def test_ndjson_body_is_one_document_per_line(owner: Tenant) -> None:
    body = (
        json.dumps({"title": "A", "text": "first"})
        + "\n\n"
        + json.dumps({"title": "B", "text": "second"})
        + "\n"
    )
    response = _post_raw(owner, body.encode(), "application/x-ndjson")
    assert response.status_code == 202, response.json()
    assert _outcomes(response) == ["created", "created"]
    assert sorted(Resource.objects.values_list("title", flat=True)) == ["A", "B"]


def test_zip_body_stores_each_document_and_refuses_what_single_upload_refuses(owner: Tenant) -> None:
    archive = make_zip(
        {
            "notes/a.txt": b"plain text",
            "b.md": b"# Heading\n\nbody",
            "guide.docx": make_docx([("h1", "Guide"), ("p", "Read this.")]),
            "image.gif": b"GIF89a" + b"\x00" * 64,
            "__MACOSX/._a.txt": b"fork",
            ".DS_Store": b"junk",
        }
    )
    response = _post_raw(owner, archive, "application/zip")
    assert response.status_code == 202, response.json()
    documents = response.json()["data"]["documents"]
    by_name = {d["name"]: d for d in documents}
    assert set(by_name) == {"notes/a.txt", "b.md", "guide.docx", "image.gif"}
    assert by_name["image.gif"]["outcome"] == "rejected"
    assert by_name["image.gif"]["error"]["code"] == "unsupported_media_type"
    assert by_name["image.gif"]["resource"] is None
    types = {d["name"]: d["resource"]["content_type"] for d in documents if d["outcome"] == "created"}
    assert types == {
        "notes/a.txt": "text/plain",
        "b.md": "text/markdown",
        "guide.docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    }
    assert by_name["notes/a.txt"]["resource"]["title"] == "notes/a.txt"
    assert by_name["notes/a.txt"]["resource"]["filename"] == "a.txt"
    assert Resource.objects.filter(workspace=owner.workspace).count() == 3


def test_zip_as_multipart_file(owner: Tenant) -> None:
    archive = make_zip({"a.txt": b"one", "b.txt": b"two"})
    response = owner.client().post(
        _url(owner), {"file": SimpleUploadedFile("docs.zip", archive)}, format="multipart"
    )
    assert response.status_code == 202, response.json()
    assert _outcomes(response) == ["created", "created"]


# --- duplicates and bad items ---------------------------------------------------


def test_duplicates_in_the_workspace_and_in_the_request_are_existing(owner: Tenant) -> None:
    single = owner.client().post(
        f"/api/v1/workspaces/{owner.workspace.id}/resources/", {"text": "already here"}, format="json"
    )
    assert single.status_code == 202
    response = _post_json(
        owner, [{"text": "already here"}, {"text": "new one"}, {"title": "again", "text": "new one"}]
    )
    assert response.status_code == 202
    documents = response.json()["data"]["documents"]
    assert _outcomes(response) == ["existing", "created", "existing"]
    assert documents[0]["resource"]["id"] == single.json()["data"]["id"]
    assert documents[2]["resource"]["id"] == documents[1]["resource"]["id"]
    assert response.json()["data"]["existing"] == 2
    assert Resource.objects.filter(workspace=owner.workspace).count() == 2


def test_a_malformed_document_refuses_the_request_naming_each(owner: Tenant) -> None:
    response = _post_json(
        owner, [{"title": "no text"}, "not an object", {"text": ""}, {"text": "fine"}, {"text": ["x"]}]
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert set(error["fields"]) == {"[0].text", "[1]", "[2].text", "[4].text"}
    assert not Resource.objects.exists()


def test_a_document_over_max_upload_bytes_is_rejected_alone(owner: Tenant, settings: Settings) -> None:
    settings.MAX_UPLOAD_BYTES = 100
    response = _post_raw(owner, make_zip({"big.txt": b"x" * 101, "small.txt": b"ok"}), "application/zip")
    assert response.status_code == 202
    documents = response.json()["data"]["documents"]
    assert [(d["name"], d["outcome"]) for d in documents] == [
        ("big.txt", "rejected"),
        ("small.txt", "created"),
    ]
    assert documents[0]["error"]["code"] == "payload_too_large"
    text = _post_json(owner, [{"text": "y" * 101}])
    assert text.json()["data"]["documents"][0]["error"]["code"] == "payload_too_large"


# --- refused requests -------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "content_type", "status", "code"),
    [
        (b"[]", "application/json", 400, "validation_error"),
        (b'{"title": "t", "text": "an object, not a list"}', "application/json", 400, "validation_error"),
        (b"[{", "application/json", 400, "validation_error"),
        (b'{"text": "a"}\n{"text": \n', "application/x-ndjson", 400, "validation_error"),
        (b"not a zip", "application/zip", 415, "unsupported_media_type"),
        (b"PK\x03\x04 damaged", "application/zip", 400, "validation_error"),
        (b"just text", "text/plain", 415, "unsupported_media_type"),
    ],
)
def test_an_unreadable_body_is_one_4xx_and_stores_nothing(
    owner: Tenant, data: bytes, content_type: str, status: int, code: str
) -> None:
    response = _post_raw(owner, data, content_type)
    assert response.status_code == status, response.json()
    assert response.json()["status"] == "error"
    assert response.json()["error"]["code"] == code
    assert not Resource.objects.exists()


def test_more_documents_than_the_limit_is_413(owner: Tenant, settings: Settings) -> None:
    settings.BATCH_UPLOAD_MAX_DOCUMENTS = 2
    response = _post_json(owner, [{"text": f"doc {i}"} for i in range(3)])
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
    archive = make_zip({f"{i}.txt": f"doc {i}".encode() for i in range(3)})
    assert _post_raw(owner, archive, "application/zip").status_code == 413
    assert _post_json(owner, [{"text": "a"}, {"text": "b"}]).status_code == 202


def test_a_body_over_the_limit_is_413(owner: Tenant, settings: Settings) -> None:
    settings.BATCH_UPLOAD_MAX_BYTES = 2048
    response = _post_json(owner, [{"text": "z" * 3000}])
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
    assert not Resource.objects.exists()


def test_the_bulk_limit_replaces_the_json_body_limit_on_this_route(owner: Tenant, settings: Settings) -> None:
    settings.MAX_JSON_BODY_BYTES = 1024
    response = _post_json(owner, [{"text": f"document {i} " + "w" * 200} for i in range(20)])
    assert response.status_code == 202
    assert response.json()["data"]["created"] == 20


# --- tenancy, scope, limits, idempotency -----------------------------------------


def test_outsider_gets_404_and_chat_key_403_and_nothing_is_stored(owner: Tenant, outsider: Tenant) -> None:
    foreign = _post_json(owner, [{"text": "intruder"}], key=outsider.admin_key)
    assert foreign.status_code == 404
    assert foreign.json()["error"]["code"] == "not_found"
    chat = _post_json(owner, [{"text": "chat key"}], key=owner.chat_key)
    assert chat.status_code == 403
    assert chat.json()["error"]["code"] == "forbidden"
    assert not Resource.objects.exists()


def test_each_document_counts_against_the_upload_limit(owner: Tenant, settings: Settings) -> None:
    settings.RATE_LIMIT_UPLOADS_PER_MINUTE = 7
    for left in (4, 1):
        response = _post_json(owner, [{"text": f"a {left}"}, {"text": f"b {left}"}, {"text": f"c {left}"}])
        assert response.status_code == 202
        assert response["RateLimit-Remaining"] == str(left)
    over = _post_json(owner, [{"text": "one more"}, {"text": "and another"}])
    assert over.status_code == 429
    assert over.json()["error"]["code"] == "rate_limited" and over["Retry-After"]
    assert Resource.objects.count() == 6


def test_idempotency_key_replays_the_first_response(owner: Tenant) -> None:
    body = [{"text": "first copy"}, {"text": "second"}]
    first = _post_json(owner, body, HTTP_IDEMPOTENCY_KEY="bulk-1")
    assert first.status_code == 202
    again = _post_json(owner, body, HTTP_IDEMPOTENCY_KEY="bulk-1")
    assert again.status_code == 202
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert Resource.objects.count() == 2
    other = _post_json(owner, [{"text": "different"}], HTTP_IDEMPOTENCY_KEY="bulk-1")
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"


def test_idempotency_key_replays_a_zip_upload(owner: Tenant) -> None:
    archive = make_zip({"a.txt": b"zipped once"})
    first = _post_raw(owner, archive, "application/zip", HTTP_IDEMPOTENCY_KEY="zip-1")
    again = _post_raw(owner, archive, "application/zip", HTTP_IDEMPOTENCY_KEY="zip-1")
    assert first.status_code == again.status_code == 202
    assert again["Idempotent-Replayed"] == "true" and again.json() == first.json()
    changed = _post_raw(
        owner, make_zip({"a.txt": b"zipped twice"}), "application/zip", HTTP_IDEMPOTENCY_KEY="zip-1"
    )
    assert changed.status_code == 422


def test_small_zip_entries_that_expand_past_the_ratio_are_refused(owner: Tenant) -> None:
    # Regression: entries of 1 MiB or less skipped the ratio check, so a few
    # kilobytes of zip became megabytes of stored text.
    archive = make_zip({f"{i}.txt": b"x" * (1024 * 1024) for i in range(3)})
    assert len(archive) < 12_000
    response = _post_raw(owner, archive, "application/zip")
    assert response.status_code == 413, response.json()
    error = response.json()["error"]
    assert error["code"] == "payload_too_large"
    assert "INGEST_MAX_COMPRESSION_RATIO" in error["message"]
    small = make_zip({f"{i}.txt": b"y" * 64 * 1024 for i in range(20)})
    assert _post_raw(owner, small, "application/zip").status_code == 413
    assert not Resource.objects.exists()
    # Ordinary text packs a few times over, well within the ratio.
    plain = make_zip({"a.txt": b"An ordinary document. " * 300, "b.txt": b"Short."})
    assert _post_raw(owner, plain, "application/zip").status_code == 202
