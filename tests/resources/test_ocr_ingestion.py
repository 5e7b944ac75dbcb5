# ruff: noqa: RUF001  (Persian letters beside Latin ones are the point)
"""Scans and tables uploaded through the API: read, searchable, each passage
with where it sits (contract v1.4), and a clear error when OCR is missing.

Real Tesseract (tests/resources/test_ocr.py says which parts it needs), real
PostgreSQL and the real embedding model; the ingestion runs here, without a
worker (resources.ingestion.resource_ingest)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from chat.backends.scripted import ScriptedBackend
from resources.ingestion import resource_ingest
from resources.models import Resource
from retrieval.models import Passage
from tests.chat.helpers import answer
from tests.conftest import Tenant
from tests.page_images import character_error_rate, image_bytes, page_images
from tests.resources.test_ocr import ENGLISH, PERSIAN, tesseract  # noqa: F401  (the fixture)
from tests.resources.test_tables import HEADER, _xlsx

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def _upload(tenant: Tenant, name: str, data: bytes, metadata: dict[str, Any] | None = None) -> Resource:
    body: dict[str, Any] = {"file": SimpleUploadedFile(name, data)}
    if metadata is not None:
        body["metadata"] = json.dumps(metadata)
    response = tenant.client("admin").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/resources/", body, format="multipart"
    )
    assert response.status_code == 202, response.json()
    resource_ingest(resource_id=response.json()["data"]["id"])
    return Resource.objects.get(id=response.json()["data"]["id"])


def _search(tenant: Tenant, query: str, workspace_id: Any = None) -> Any:
    return tenant.client("chat").post(
        f"/api/v1/workspaces/{workspace_id or tenant.workspace.id}/search/", {"query": query}, format="json"
    )


def test_a_scanned_persian_page_is_searchable_with_its_page_and_box(owner: Tenant, outsider: Tenant) -> None:
    scan = image_bytes(page_images(PERSIAN, dpi=300, rtl=True, language="fa"))
    resource = _upload(owner, "refunds.png", scan, metadata={"language": "fa"})
    assert resource.status == "ready", resource.error_message
    assert resource.content_type == "image/png"
    passages = list(Passage.objects.filter(resource=resource))
    assert passages and all(p.page == 1 and p.bbox is not None for p in passages)
    response = _search(owner, "بازپرداخت چند روز طول می‌کشد؟")
    assert response.status_code == 200, response.json()
    top = response.json()["data"]["items"][0]
    assert "بازپرداخت" in top["text"]
    assert top["page"] == 1
    x0, y0, x1, y1 = top["bbox"]
    assert 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1
    # Another organization's key never reaches the workspace.
    assert _search(outsider, "بازپرداخت", workspace_id=owner.workspace.id).status_code == 404


def test_without_tesseract_the_resource_says_what_to_install(owner: Tenant, monkeypatch: Any) -> None:
    import pytesseract

    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/tesseract")
    resource = _upload(owner, "scan.png", image_bytes(page_images(ENGLISH, dpi=100)))
    response = owner.client("admin").get(f"/api/v1/workspaces/{owner.workspace.id}/resources/{resource.id}/")
    error = response.json()["data"]["error"]
    assert response.json()["data"]["status"] == "failed"
    assert error["code"] == "ocr_unavailable"
    assert "apt-get install tesseract-ocr tesseract-ocr-fas tesseract-ocr-ara" in error["message"]


def test_an_xlsx_upload_answers_by_row_under_its_header(owner: Tenant) -> None:
    rows = [[f"Kettle K{n}", 20 + n, n] for n in range(1, 40)] + [["Blender B2", 89.5, 3]]
    resource = _upload(owner, "prices.xlsx", _xlsx({"Prices": [HEADER, *rows]}))
    assert resource.status == "ready", resource.error_message
    top = _search(owner, "Blender B2 price").json()["data"]["items"][0]
    assert "Blender B2 | 89.5 | 3" in top["text"]
    assert top["text"].startswith("Prices, rows ")
    assert "Product | Price | Stock" in top["text"]
    assert top["page"] is None and top["bbox"] is None


def test_a_scan_without_a_language_is_read_in_its_workspace_s_language(owner: Tenant, settings: Any) -> None:
    settings.OCR_LANGUAGES = "eng"
    text = "\n\n".join(PERSIAN[::-1]) + "\n\nاین راهنما برای مشتریان فروشگاه نوشته شده است."
    assert _upload(owner, "guide.txt", text.encode()).status == "ready"
    scan = image_bytes(page_images(PERSIAN, dpi=300, rtl=True, language="fa"))
    resource = _upload(owner, "refunds.png", scan)
    assert resource.status == "ready", resource.error_message
    read = "\n\n".join(
        Passage.objects.filter(resource=resource).order_by("ordinal").values_list("text", flat=True)
    )
    # Read with fas, not with the deployment's eng (which reads no Persian letter).
    assert character_error_rate(read, "\n\n".join(PERSIAN)) <= 0.08


def test_a_cited_part_of_a_scan_names_its_page_and_box(owner: Tenant, scripted: ScriptedBackend) -> None:
    """The scripted backend stands in for the generation model: it cites the first passage."""
    _upload(owner, "refunds.png", image_bytes(page_images(ENGLISH, dpi=200)))
    scripted.replies = [answer(("Refunds are paid within 14 days.", 1))]
    response = owner.client("chat").post(
        f"/api/v1/workspaces/{owner.workspace.id}/chat/",
        {"external_user_id": "alice", "message": "How long do refunds take?"},
        format="json",
    )
    assert response.status_code == 200, response.json()
    data = response.json()["data"]
    source = data["assistant_message"]["response"]["parts"][0]["source"]
    assert source["page"] == 1 and len(source["bbox"]) == 4
    session, message = data["session"]["id"], data["assistant_message"]["id"]
    sources = owner.client("chat").get(
        f"/api/v1/workspaces/{owner.workspace.id}/sessions/{session}/messages/{message}/sources/",
        {"external_user_id": "alice"},
    )
    item = sources.json()["data"]["items"][0]
    assert (item["page"], item["bbox"]) == (1, source["bbox"])
