"""Uploads through the console (many files, zips of documents) go through
the API's upload service; the progress view reports where they stand and
retries failures."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django import Settings

from resources.models import Resource, ResourceStatus
from tests.conftest import Tenant
from tests.resources.files import make_docx, make_pdf
from tests.staff import Staff

pytestmark = pytest.mark.django_db


def make_zip(members: dict[str, bytes], *, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def _upload(staff: Staff, tenant: Tenant, *files: tuple[str, bytes], json: bool = True) -> Any:
    headers = {"Accept": "application/json"} if json else {}
    return staff.client.post(
        f"/admin/console/{tenant.workspace.id}/ingestion/upload/",
        {"files": [SimpleUploadedFile(name, data) for name, data in files]},
        headers=headers,
    )


def _outcomes(response: Any) -> list[tuple[str, str]]:
    assert response.status_code == 200, response.content
    return [(r["name"], r["outcome"]) for r in response.json()["data"]["results"]]


def test_many_files_in_one_upload_each_become_a_pending_resource(owner: Tenant, curator: Staff) -> None:
    response = _upload(
        curator,
        owner,
        ("faq.md", b"# FAQ\n\nYes, we ship abroad."),
        ("terms.pdf", make_pdf(["Terms of sale."])),
        ("guide.docx", make_docx([("p", "A DOCX is a zip, and a document.")])),
    )
    assert _outcomes(response) == [("faq.md", "created"), ("terms.pdf", "created"), ("guide.docx", "created")]
    stored = {r.title: (r.content_type, r.status) for r in Resource.objects.filter(workspace=owner.workspace)}
    assert stored == {
        "faq.md": ("text/markdown", "pending"),
        "terms.pdf": ("application/pdf", "pending"),
        "guide.docx": ("application/vnd.openxmlformats-officedocument.wordprocessingml.document", "pending"),
    }


def test_a_zip_is_unpacked_into_its_documents(owner: Tenant, curator: Staff) -> None:
    archive = make_zip(
        {
            "handbook/intro.md": b"# Intro\n\nWelcome.",
            "handbook/leave.txt": b"Leave is booked two weeks ahead.",
            "handbook/": b"",
            "__MACOSX/handbook/._intro.md": b"\x00\x05\x16\x07",
            ".DS_Store": b"\x00\x00\x00\x01Bud1",
            "logo.gif": b"GIF89a\x01\x00\x01\x00\x00",
        }
    )
    outcomes = _outcomes(_upload(curator, owner, ("handbook.zip", archive)))
    assert outcomes == [
        ("handbook.zip/handbook/intro.md", "created"),
        ("handbook.zip/handbook/leave.txt", "created"),
        ("handbook.zip/logo.gif", "refused"),
    ]
    titles = set(Resource.objects.filter(workspace=owner.workspace).values_list("title", "filename"))
    assert titles == {("handbook/intro.md", "intro.md"), ("handbook/leave.txt", "leave.txt")}


def test_the_same_document_again_is_the_existing_resource(owner: Tenant, curator: Staff) -> None:
    _upload(curator, owner, ("a.txt", b"Same bytes."))
    outcomes = _outcomes(
        _upload(curator, owner, ("b.txt", b"Same bytes."), ("c.zip", make_zip({"d.txt": b"Same bytes."})))
    )
    assert outcomes == [("b.txt", "existing"), ("c.zip/d.txt", "existing")]
    assert Resource.objects.filter(workspace=owner.workspace).count() == 1


def test_refusals_say_why_and_store_nothing(owner: Tenant, curator: Staff, settings: Settings) -> None:
    settings.MAX_UPLOAD_BYTES = 2048
    response = _upload(
        curator,
        owner,
        ("big.txt", b"x" * 3000),
        ("image.gif", b"GIF89a\x01\x00\x01\x00\x00"),
        ("broken.zip", b"PK\x03\x04 not really a zip"),
        ("empty.zip", make_zip({"folder/": b""})),
        ("nested.zip", make_zip({"inner.zip": make_zip({"a.txt": b"A"})})),
        ("inner-big.zip", make_zip({"big.txt": b"y" * 3000})),
    )
    results = {r["name"]: r for r in response.json()["data"]["results"]}
    assert {name: r["outcome"] for name, r in results.items()} == {
        "big.txt": "refused",
        "image.gif": "refused",
        "broken.zip": "refused",
        "empty.zip": "refused",
        "nested.zip/inner.zip": "refused",
        "inner-big.zip/big.txt": "refused",
    }
    assert "limit is 2,048 bytes" in results["big.txt"]["message"]
    assert "Accepted types" in results["image.gif"]["message"]
    assert "damaged" in results["broken.zip"]["message"]
    assert "no documents" in results["empty.zip"]["message"]
    assert "ZIP archives other than DOCX" in results["nested.zip/inner.zip"]["message"]
    assert not Resource.objects.exists()


def test_an_archive_over_its_bounds_is_refused_before_anything_is_stored(
    owner: Tenant, curator: Staff, settings: Settings
) -> None:
    # The API's bounds (resources/parsing/archive.py), not the console's own.
    settings.INGEST_MAX_ARCHIVE_ENTRIES = 2
    outcomes = _outcomes(
        _upload(curator, owner, ("many.zip", make_zip({f"{i}.txt": b"%d" % i for i in range(3)})))
    )
    assert outcomes == [("many.zip", "refused")]
    settings.INGEST_MAX_ARCHIVE_ENTRIES = 10
    # A bomb: 2 MiB of zeros compress about a thousand times.
    bomb = make_zip({"zeros.txt": b"0" * (2 * 1024 * 1024)})
    response = _upload(curator, owner, ("bomb.zip", bomb))
    assert _outcomes(response) == [("bomb.zip", "refused")]
    assert "expands" in response.json()["data"]["results"][0]["message"]
    settings.INGEST_MAX_UNCOMPRESSED_BYTES = 10
    assert _outcomes(_upload(curator, owner, ("small.zip", make_zip({"a.txt": b"Eleven byte"})))) == [
        ("small.zip", "refused")
    ]
    assert not Resource.objects.exists()


def test_without_the_script_the_upload_form_posts_and_comes_back(owner: Tenant, curator: Staff) -> None:
    response = _upload(
        curator, owner, ("a.txt", b"Some text."), ("b.gif", b"GIF89a\x01\x00\x01\x00\x00"), json=False
    )
    assert response.status_code == 302
    assert response["Location"] == f"/admin/console/{owner.workspace.id}/ingestion/"
    page = curator.client.get(response["Location"]).content.decode()
    assert "Queued for ingestion: a.txt" in page and "Refused b.gif: " in page
    empty = curator.client.post(
        f"/admin/console/{owner.workspace.id}/ingestion/upload/", headers={"Accept": "application/json"}
    )
    assert empty.status_code == 400 and empty.json()["error"]["fields"]["files"]


def _resource(tenant: Tenant, title: str, status: str, **fields: Any) -> Resource:
    return Resource.objects.create(
        workspace=tenant.workspace,
        title=title,
        content_type="text/plain",
        size_bytes=1,
        sha256=title.ljust(64, "0")[:64],
        status=status,
        **fields,
    )


def test_the_status_view_counts_every_status_and_lists_failures_first(owner: Tenant, curator: Staff) -> None:
    _resource(owner, "ready-one", ResourceStatus.READY, passage_count=3)
    _resource(owner, "pending-one", ResourceStatus.PENDING)
    _resource(
        owner, "failed-one", ResourceStatus.FAILED, error_code="corrupt_file", error_message="Damaged PDF."
    )
    response = curator.client.get(f"/admin/console/{owner.workspace.id}/ingestion/status/")
    assert response.status_code == 200
    data = response.json()
    assert data["counts"] == {"pending": 1, "processing": 0, "ready": 1, "failed": 1}
    assert (data["total"], data["finished"], data["percent"], data["done"]) == (3, 2, 66, False)
    html = data["html"]
    assert html.index("failed-one") < html.index("pending-one") < html.index("ready-one")
    assert "corrupt_file" in html and "Damaged PDF." in html
    assert html.count('class="button retry"') == 1


def test_retry_queues_a_failed_resource_again(owner: Tenant, curator: Staff) -> None:
    failed = _resource(owner, "failed-one", ResourceStatus.FAILED, error_code="corrupt_file")
    response = curator.client.post(
        f"/admin/console/{owner.workspace.id}/ingestion/{failed.id}/retry/",
        headers={"Accept": "application/json"},
    )
    assert response.status_code == 202
    failed.refresh_from_db()
    assert (failed.status, failed.error_code) == (ResourceStatus.PENDING, "")
    assert (
        curator.client.get(f"/admin/console/{owner.workspace.id}/ingestion/status/").json()["done"] is False
    )


def test_the_progress_page_renders_the_status_and_its_script(owner: Tenant, curator: Staff) -> None:
    _resource(owner, "ready-one", ResourceStatus.READY)
    page = curator.client.get(f"/admin/console/{owner.workspace.id}/ingestion/").content.decode()
    assert 'id="progress"' in page and 'data-state="done"' in page
    assert "/static/console/progress.js" in page  # served by the app itself
    assert f'data-status-url="/admin/console/{owner.workspace.id}/ingestion/status/"' in page
