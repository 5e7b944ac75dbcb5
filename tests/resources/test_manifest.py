"""The sync API: uploads naming an ``external_id`` replace their document in
place, the manifest says what is new, changed, unchanged and gone, and
deletions go by external id. Owner, chat key and outsider in each part."""

from __future__ import annotations

import hashlib
import json
import uuid
import zipfile
from collections.abc import Callable
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from resources import manifest
from resources.ingestion import resource_ingest
from resources.ingestion.write import chunks_embed_batch
from resources.models import Resource, ResourceFile
from retrieval.models import Passage
from tests.conftest import Tenant
from tests.resources.files import make_zip

pytestmark = pytest.mark.django_db

Capture = Callable[..., Any]


def _url(tenant: Tenant, suffix: str) -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/{suffix}"


def _put_text(tenant: Tenant, external_id: str, text: str, **extra: Any) -> Any:
    body = {"text": text, "external_id": external_id, **extra}
    return tenant.client().post(_url(tenant, "resources/"), body, format="json")


def _manifest(tenant: Tenant, documents: list[dict[str, Any]], complete: bool = True) -> Any:
    body = {"documents": documents, "complete": complete}
    return tenant.client().post(_url(tenant, "sync/"), body, format="json")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_an_upload_naming_a_held_external_id_replaces_that_document_in_place(
    owner: Tenant, django_capture_on_commit_callbacks: Capture
) -> None:
    first = _put_text(owner, "wiki/1", "Parking is free on Sundays.", metadata={"site": "north"})
    assert first.status_code == 202, first.json()
    created = first.json()["data"]
    assert (created["external_id"], created["version"]) == ("wiki/1", "")
    with django_capture_on_commit_callbacks() as queued:
        again = _put_text(owner, "wiki/1", "Parking costs two euros on Sundays.", version="7")
    assert again.status_code == 200, again.json()
    replaced = again.json()["data"]
    assert replaced["id"] == created["id"]
    assert replaced["sha256"] == _sha("Parking costs two euros on Sundays.")
    assert replaced["version"] == "7"
    # Not sent: kept.
    assert replaced["metadata"] == {"site": "north"}
    assert len(queued) == 1
    stored = ResourceFile.objects.get(resource_id=created["id"]).data
    assert bytes(stored) == b"Parking costs two euros on Sundays."
    assert Resource.objects.filter(workspace=owner.workspace).count() == 1


def test_the_same_bytes_again_queue_nothing_and_apply_what_was_sent(
    owner: Tenant, django_capture_on_commit_callbacks: Capture
) -> None:
    created = _put_text(owner, "wiki/1", "Lockers open at six.").json()["data"]
    with django_capture_on_commit_callbacks() as queued:
        again = _put_text(owner, "wiki/1", "Lockers open at six.", access={"groups": ["staff"]})
    assert again.status_code == 200
    assert again.json()["data"]["id"] == created["id"]
    assert again.json()["data"]["access"] == {"groups": ["staff"]}
    assert queued == []


def test_multipart_and_batch_carry_the_external_id(owner: Tenant) -> None:
    upload = owner.client().post(
        _url(owner, "resources/"),
        {"file": SimpleUploadedFile("a.md", b"# Fees\n\nNo fees."), "external_id": "drive/a.md"},
        format="multipart",
    )
    assert upload.status_code == 202, upload.json()
    batch = owner.client().post(
        _url(owner, "resources/batch/"),
        [
            {"text": "# Fees\n\nOne fee.", "external_id": "drive/a.md", "version": "2"},
            {"text": "Opening hours: nine to five.", "external_id": "drive/b.md"},
        ],
        format="json",
    )
    assert batch.status_code == 202, batch.json()
    body = batch.json()["data"]
    assert [d["outcome"] for d in body["documents"]] == ["replaced", "created"]
    assert (body["replaced"], body["created"]) == (1, 1)
    assert body["documents"][0]["resource"]["id"] == upload.json()["data"]["id"]
    listed = owner.client().get(_url(owner, "resources/"), {"external_id": "drive/b.md"}).json()["data"]
    assert [r["external_id"] for r in listed["items"]] == ["drive/b.md"]


def test_bytes_held_by_another_document_are_a_conflict_or_adopted(owner: Tenant) -> None:
    plain = owner.client().post(_url(owner, "resources/"), {"text": "Shared text."}, format="json")
    _put_text(owner, "wiki/2", "Other text.")
    conflict = _put_text(owner, "wiki/2", "Shared text.")
    assert conflict.status_code == 409
    assert conflict.json()["error"]["code"] == "duplicate_content"
    # A new external id with bytes a document without one holds: that document takes it.
    adopted = _put_text(owner, "wiki/3", "Shared text.", metadata={"ignored": True})
    assert adopted.status_code == 200
    assert adopted.json()["data"]["id"] == plain.json()["data"]["id"]
    assert adopted.json()["data"]["external_id"] == "wiki/3"
    assert adopted.json()["data"]["metadata"] == {}
    assert _put_text(owner, "wiki/4", "Shared text.").status_code == 409


def test_the_manifest_names_new_changed_unchanged_and_gone(owner: Tenant) -> None:
    for external_id, text in [("a", "Text A."), ("b", "Text B."), ("c", "Text C."), ("d", "Text D.")]:
        _put_text(owner, external_id, text, version="1")
    owner.client().post(_url(owner, "resources/"), {"text": "No external id."}, format="json")
    documents = [
        {"external_id": "a", "sha256": _sha("Text A.")},
        {"external_id": "b", "sha256": _sha("Text B, edited.").upper()},
        {"external_id": "c", "version": "2"},
        {"external_id": "d", "version": "1"},
        {"external_id": "e", "sha256": _sha("Text E.")},
    ]
    answer = _manifest(owner, documents)
    assert answer.status_code == 200, answer.json()
    body = answer.json()["data"]
    assert body == {"new": ["e"], "changed": ["b", "c"], "unchanged": ["a", "d"], "gone": []}
    partial = _manifest(owner, documents[:2], complete=False).json()["data"]
    assert partial["gone"] == []
    complete = _manifest(owner, documents[:2]).json()["data"]
    held = dict(Resource.objects.filter(workspace=owner.workspace).values_list("external_id", "id"))
    assert complete["gone"] == [{"external_id": x, "resource_id": str(held[x])} for x in ("c", "d")]
    # It wrote nothing.
    assert Resource.objects.filter(workspace=owner.workspace).count() == 5


def test_deletion_by_external_id_confirms_what_it_deleted(owner: Tenant, outsider: Tenant) -> None:
    kept = _put_text(owner, "a", "Kept.").json()["data"]
    gone = _put_text(owner, "b", "Gone.").json()["data"]
    _put_text(outsider, "b", "Theirs.")
    response = owner.client().post(_url(owner, "sync/delete/"), {"external_ids": ["b", "x"]}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["data"] == {
        "deleted": [{"external_id": "b", "resource_id": gone["id"]}],
        "not_found": ["x"],
    }
    assert list(Resource.objects.filter(workspace=owner.workspace).values_list("id", flat=True)) == [
        uuid.UUID(kept["id"])
    ]
    assert Resource.objects.filter(workspace=outsider.workspace, external_id="b").exists()


def test_outsiders_get_404_and_chat_keys_403(owner: Tenant, outsider: Tenant) -> None:
    _put_text(owner, "a", "Owner's.")
    for suffix, body in [("sync/", {"documents": []}), ("sync/delete/", {"external_ids": ["a"]})]:
        assert outsider.client().post(_url(owner, suffix), body, format="json").status_code == 404
        assert owner.client("chat").post(_url(owner, suffix), body, format="json").status_code == 403
    assert Resource.objects.filter(workspace=owner.workspace, external_id="a").exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"documents": [{"external_id": "a", "sha256": "abc"}]}, "documents[0].sha256"),
        ({"documents": [{"external_id": "a"}]}, "documents[0]"),
        ({"documents": [{"external_id": "a", "sha256": "0" * 64, "version": "1"}]}, "documents[0]"),
        (
            {"documents": [{"external_id": "a", "version": "1"}, {"external_id": "a", "version": "2"}]},
            "documents[1].external_id",
        ),
        ({"documents": [{"external_id": "x" * 256, "version": "1"}]}, "documents[0].external_id"),
        ({"documents": [{"external_id": "a", "version": "1", "size": 3}]}, "documents[0].size"),
        ({"documents": "a"}, "documents"),
        ({"documents": [], "complete": "yes"}, "complete"),
        ({"documents": [], "extra": 1}, "extra"),
    ],
)
def test_a_malformed_manifest_is_a_400_naming_the_path(owner: Tenant, body: Any, field: str) -> None:
    response = owner.client().post(_url(owner, "sync/"), body, format="json")
    assert response.status_code == 400, response.json()
    assert field in response.json()["error"]["fields"]


def test_a_manifest_over_the_bound_is_a_400(owner: Tenant, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manifest, "MAX_MANIFEST_DOCUMENTS", 2)
    documents = [{"external_id": str(i), "version": "1"} for i in range(3)]
    response = _manifest(owner, documents)
    assert response.status_code == 400
    assert "documents" in response.json()["error"]["fields"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"external_ids": []}, "external_ids"),
        ({"external_ids": ["a", "a"]}, "external_ids[1]"),
        ({"external_ids": ["a", 3]}, "external_ids[1]"),
        ({"external_ids": [{"a": 1}, ["b"]]}, "external_ids[1]"),
        ({"external_ids": "a"}, "external_ids"),
    ],
)
def test_a_malformed_deletion_is_a_400(owner: Tenant, body: Any, field: str) -> None:
    response = owner.client().post(_url(owner, "sync/delete/"), body, format="json")
    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"external_id": "x" * 256}, "external_id"),
        ({"external_id": "  "}, "external_id"),
        ({"version": "3"}, "version"),
    ],
)
def test_a_bad_external_id_on_upload_is_a_400(owner: Tenant, extra: dict[str, Any], field: str) -> None:
    body = {"text": "Some text.", **extra}
    response = owner.client().post(_url(owner, "resources/"), body, format="json")
    assert response.status_code == 400, response.json()
    assert field in response.json()["error"]["fields"]
    assert not Resource.objects.filter(workspace=owner.workspace).exists()


def test_an_external_id_twice_in_one_batch_is_a_400(owner: Tenant) -> None:
    items = [{"text": "One.", "external_id": "a"}, {"text": "Two.", "external_id": "a"}]
    response = owner.client().post(_url(owner, "resources/batch/"), items, format="json")
    assert response.status_code == 400
    assert "[1].external_id" in response.json()["error"]["fields"]


@pytest.mark.slow
def test_a_replaced_document_answers_from_its_old_passages_until_the_new_are_ready(owner: Tenant) -> None:
    created = _put_text(owner, "wiki/9", "The cafeteria closes at three in the afternoon.").json()["data"]
    resource_id = uuid.UUID(created["id"])
    assert resource_ingest(resource_id=resource_id) == "ready"
    old_ids = set(Passage.objects.filter(resource_id=created["id"]).values_list("id", flat=True))
    _put_text(owner, "wiki/9", "The cafeteria closes at eight in the evening.")
    # Queued, not yet ingested: still ready, still found by its old text.
    assert Resource.objects.get(pk=created["id"]).status == "ready"
    assert "three" in _search(owner, "When does the cafeteria close?")
    assert resource_ingest(resource_id=resource_id) == "ready"
    assert not old_ids & set(Passage.objects.filter(resource_id=created["id"]).values_list("id", flat=True))
    found = _search(owner, "When does the cafeteria close?")
    assert "eight" in found and "three" not in found


def _search(tenant: Tenant, query: str) -> str:
    response = tenant.client().post(_url(tenant, "search/"), {"query": query}, format="json")
    assert response.status_code == 200, response.json()
    return " ".join(hit["text"] for hit in response.json()["data"]["items"])


@pytest.mark.slow
def test_an_attempt_on_bytes_replaced_meanwhile_stores_nothing(
    owner: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first ingestion is running when the page is edited: it must not
    write the old text over the new bytes; the ingestion queued by the
    replacement writes the new text."""
    created = _put_text(owner, "wiki/5", "The gym opens at seven in the morning.").json()["data"]
    resource_id = uuid.UUID(created["id"])
    embed = chunks_embed_batch

    def edited_meanwhile(*args: Any, **kwargs: Any) -> Any:
        assert _put_text(owner, "wiki/5", "The gym opens at nine in the morning.").status_code == 200
        return embed(*args, **kwargs)

    monkeypatch.setattr("resources.ingestion.run.chunks_embed_batch", edited_meanwhile)
    assert resource_ingest(resource_id=resource_id) == "skipped"
    monkeypatch.undo()
    assert not Passage.objects.filter(resource_id=resource_id).exists()
    assert Resource.objects.get(pk=resource_id).status == "pending"
    assert resource_ingest(resource_id=resource_id) == "ready"
    texts = " ".join(Passage.objects.filter(resource_id=resource_id).values_list("text", flat=True))
    assert "nine" in texts and "seven" not in texts


def test_a_zip_manifest_carries_external_ids(owner: Tenant) -> None:
    created = _put_text(owner, "drive/a.md", "Old text of a.", metadata={"k": "v"}).json()["data"]
    manifest = {"documents": {"a.md": {"external_id": "drive/a.md", "version": "3"}}}
    body = make_zip(
        {"manifest.json": json.dumps(manifest).encode(), "a.md": b"New text of a."},
        compression=zipfile.ZIP_STORED,
    )
    response = owner.client().post(_url(owner, "resources/batch/"), body, content_type="application/zip")
    assert response.status_code == 202, response.json()
    [document] = response.json()["data"]["documents"]
    assert document["outcome"] == "replaced"
    assert document["resource"]["id"] == created["id"]
    assert (document["resource"]["version"], document["resource"]["metadata"]) == ("3", {"k": "v"})


def test_a_zip_manifest_naming_an_external_id_twice_is_a_400(owner: Tenant) -> None:
    manifest = {"documents": {"a.md": {"external_id": "x"}, "b.md": {"external_id": "x"}}}
    body = make_zip(
        {"manifest.json": json.dumps(manifest).encode(), "a.md": b"A.", "b.md": b"B."},
        compression=zipfile.ZIP_STORED,
    )
    response = owner.client().post(_url(owner, "resources/batch/"), body, content_type="application/zip")
    assert response.status_code == 400
    assert 'manifest.documents["b.md"].external_id' in response.json()["error"]["fields"]
