"""OCR in turns (docs/ocr.md, "In turns"): a scan is read a few pages per
ingestion attempt, its pages kept between attempts, and handed back to the
queue's fair claim between turns without spending a failure attempt.

Real Tesseract (tests/resources/test_ocr.py says which parts it needs), real
PostgreSQL and the real embedding model; each attempt runs here, without a
worker (resources.ingestion.resources_ingest, as the tasks call it)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django import Settings

from resources import services
from resources.ingestion import IngestResult, resource_ingest, resources_ingest
from resources.models import OcrPage, OcrScan, Resource, ResourceStatus
from resources.parsing import ocr, ocr_turn
from retrieval.models import Passage
from tests.conftest import Tenant
from tests.page_images import page_images, scanned_pdf
from tests.resources.test_ocr import tesseract  # noqa: F401  (the fixture)
from tests.staff import make_staff

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

SENTENCES = [
    "The Juicer J6 presses fruit and vegetables into fresh juice in under a minute.",
    "Refunds are paid within 14 days of the return reaching our warehouse.",
    "The warranty covers the motor for five years and the jug for two.",
    "Orders placed before noon leave the warehouse on the same day.",
    "Replacement blades are sold in packs of two at any of our shops.",
]


@pytest.fixture(autouse=True)
def pages_not_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Turns end by their pages here, whatever the machine's speed
    (a turn also ends once its pages took TURN_SECONDS: tested below)."""
    monkeypatch.setattr(ocr_turn, "TURN_SECONDS", float("inf"))


def _scan(pages: int = 5) -> bytes:
    """A PDF of ``pages`` scanned pages without a text layer, a sentence each."""
    return scanned_pdf([page_images([SENTENCES[n % 5]], dpi=150)[0] for n in range(pages)], dpi=150)


def _upload(tenant: Tenant, data: bytes, name: str = "scan.pdf") -> uuid.UUID:
    response = tenant.client("admin").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/resources/",
        {"file": SimpleUploadedFile(name, data), "metadata": '{"language": "en"}'},
        format="multipart",
    )
    assert response.status_code == 202, response.json()
    return uuid.UUID(response.json()["data"]["id"])


def _passages(resource_id: uuid.UUID) -> list[tuple[str, int | None, Any]]:
    rows = Passage.objects.filter(resource_id=resource_id).order_by("ordinal")
    return list(rows.values_list("text", "page", "bbox"))


def _requeued() -> tuple[list[uuid.UUID], Any]:
    calls: list[uuid.UUID] = []
    return calls, lambda resource_id, countdown: calls.append(resource_id)


def test_a_scan_read_in_turns_ends_with_the_passages_of_one_reading(
    owner: Tenant, outsider: Tenant, settings: Settings
) -> None:
    settings.OCR_PAGES_PER_TURN = 0  # the whole document in one attempt
    once = _upload(outsider, _scan())
    assert resource_ingest(resource_id=once) == IngestResult.READY
    settings.OCR_PAGES_PER_TURN = 2
    turned = _upload(owner, _scan())
    requeued, requeue = _requeued()
    for read in (2, 4):
        assert resource_ingest(resource_id=turned, requeue=requeue) == IngestResult.CONTINUING
        resource = Resource.objects.get(pk=turned)
        # Back in the queue as a first attempt: no failure attempt spent.
        assert (resource.status, resource.attempts, resource.ingest_retry_at) == ("pending", 0, None)
        scan = OcrScan.objects.get(resource_id=turned)
        assert (scan.pages_read, scan.pages_total) == (read, 5) and scan.seconds > 0
    assert requeued == [turned, turned]
    assert resource_ingest(resource_id=turned) == IngestResult.READY
    assert _passages(turned) == _passages(once) and len(_passages(once)) >= 1
    text = " ".join(text for text, _, _ in _passages(turned))
    assert "Refunds are paid" in text and "Replacement blades" in text  # pages 2 and 5
    # The kept pages go once the document is ready.
    assert not OcrScan.objects.exists() and not OcrPage.objects.exists()


def test_a_turn_whose_pages_took_long_ends_early(
    owner: Tenant, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page with a table takes several times a page of text: a turn ends
    after the page that took it past TURN_SECONDS, not after its pages."""
    settings.OCR_PAGES_PER_TURN = 2
    monkeypatch.setattr(ocr_turn, "TURN_SECONDS", 0.0)
    scanned = _upload(owner, _scan(3))
    _, requeue = _requeued()
    for read in (1, 2):
        assert resource_ingest(resource_id=scanned, requeue=requeue) == IngestResult.CONTINUING
        assert OcrScan.objects.get(resource_id=scanned).pages_read == read
    assert resource_ingest(resource_id=scanned, requeue=requeue) == IngestResult.READY


def test_another_organizations_upload_is_claimed_between_two_turns_of_a_scan(
    owner: Tenant, outsider: Tenant, settings: Settings
) -> None:
    settings.OCR_PAGES_PER_TURN = 1
    scan = _upload(owner, _scan(3))
    _, requeue = _requeued()
    # The scan's first turn, taken by the fair claim as a task takes it.
    assert resources_ingest(resource_ids=[], requeue=requeue, fill=4) == {scan: IngestResult.CONTINUING}
    small = services.resource_create_from_text(workspace=outsider.workspace, text="Opening hours: eight.")
    # The next claim serves the organization waiting, not the scan's next
    # turn, and in a batch without it: the turn runs alone after it.
    assert resources_ingest(resource_ids=[], requeue=requeue, fill=4) == {small.resource.id: "ready"}
    also = services.resource_create_from_text(workspace=owner.workspace, text="Delivery is free.")
    assert resources_ingest(resource_ids=[], requeue=requeue, fill=4) == {scan: IngestResult.CONTINUING}
    assert resources_ingest(resource_ids=[], requeue=requeue, fill=4) == {also.resource.id: "ready"}
    assert resources_ingest(resource_ids=[], requeue=requeue, fill=4) == {scan: IngestResult.READY}
    assert Resource.objects.get(pk=scan).attempts == 1


def test_the_page_budget_counts_the_pages_of_every_turn(owner: Tenant, settings: Settings) -> None:
    settings.OCR_PAGES_PER_TURN = 2
    settings.OCR_MAX_PAGES = 3
    resource_id = _upload(owner, _scan(5))
    assert resource_ingest(resource_id=resource_id) == IngestResult.CONTINUING
    assert resource_ingest(resource_id=resource_id) == IngestResult.FAILED
    resource = Resource.objects.get(pk=resource_id)
    assert resource.error_code == "file_too_complex" and "OCR_MAX_PAGES" in resource.error_message
    assert not OcrScan.objects.exists() and not OcrPage.objects.exists()


def test_the_time_budget_counts_the_seconds_of_every_turn(owner: Tenant, settings: Settings) -> None:
    settings.OCR_PAGES_PER_TURN = 1
    settings.OCR_TIMEOUT_SECONDS = 30
    resource_id = _upload(owner, _scan(3))
    assert resource_ingest(resource_id=resource_id) == IngestResult.CONTINUING
    # Earlier turns spent all but a moment of the budget between them.
    OcrScan.objects.filter(resource_id=resource_id).update(seconds=29.999)
    assert resource_ingest(resource_id=resource_id) == IngestResult.FAILED
    resource = Resource.objects.get(pk=resource_id)
    assert resource.error_code == "ingest_timeout" and "OCR_TIMEOUT_SECONDS" in resource.error_message


def test_deleting_or_reingesting_a_scan_mid_way_leaves_no_kept_pages(
    owner: Tenant, settings: Settings
) -> None:
    settings.OCR_PAGES_PER_TURN = 1
    deleted = _upload(owner, _scan(2))
    assert resource_ingest(resource_id=deleted) == IngestResult.CONTINUING
    assert OcrPage.objects.filter(scan__resource_id=deleted).count() == 1
    admin = owner.client("admin")
    assert admin.delete(f"/api/v1/workspaces/{owner.workspace.id}/resources/{deleted}/").status_code == 204
    assert not OcrScan.objects.exists() and not OcrPage.objects.exists()

    reingested = _upload(owner, _scan(3))
    assert resource_ingest(resource_id=reingested) == IngestResult.CONTINUING
    response = admin.post(f"/api/v1/workspaces/{owner.workspace.id}/resources/{reingested}/reingest/")
    assert response.status_code == 202, response.json()
    assert not OcrScan.objects.exists() and not OcrPage.objects.exists()
    # Read again from its first page.
    assert resource_ingest(resource_id=reingested) == IngestResult.CONTINUING
    assert list(OcrPage.objects.values_list("page", flat=True)) == [1]


def test_a_replaced_scan_is_read_again_from_its_first_page(owner: Tenant, settings: Settings) -> None:
    settings.OCR_PAGES_PER_TURN = 1
    resource = Resource.objects.get(pk=_upload(owner, _scan(3)))
    assert resource_ingest(resource_id=resource.pk) == IngestResult.CONTINUING
    # New bytes under the same resource (as an upload by external id writes them).
    Resource.objects.filter(pk=resource.pk).update(sha256="0" * 64)
    assert resource_ingest(resource_id=resource.pk) == IngestResult.CONTINUING
    scan = OcrScan.objects.get(resource_id=resource.pk)
    assert (scan.sha256, scan.pages_read) == ("0" * 64, 1)
    assert list(OcrPage.objects.values_list("page", flat=True)) == [1]


def test_the_console_shows_a_scans_pages_read(owner: Tenant, settings: Settings) -> None:
    curator = make_staff("curator", organization=owner.organization)
    settings.OCR_PAGES_PER_TURN = 1
    resource_id = _upload(owner, _scan(2))
    assert resource_ingest(resource_id=resource_id) == IngestResult.CONTINUING
    assert Resource.objects.get(pk=resource_id).status == ResourceStatus.PENDING
    status = curator.client.get(f"/admin/console/{owner.workspace.id}/ingestion/status/").json()
    assert 'data-read="1" data-total="2"' in status["html"]
    assert "OCR: 1 of 2 pages read" in status["html"]


def test_an_attempt_that_breaks_mid_turn_loses_only_the_page_it_was_reading(
    owner: Tenant, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from resources.parsing import pdf

    settings.OCR_PAGES_PER_TURN = 2
    real = ocr.ocr_page
    broken: list[int] = []

    def ocr_page(image: Any, *, page: int | None = None) -> Any:
        if page == 2 and not broken:  # the worker's trouble on the turn's second page
            broken.append(page)
            raise RuntimeError("the worker broke")
        return real(image, page=page)

    monkeypatch.setattr(pdf, "ocr_page", ocr_page)
    resource_id = _upload(owner, _scan(3))
    _, requeue = _requeued()
    assert resource_ingest(resource_id=resource_id, requeue=requeue) == IngestResult.RETRYING
    assert list(OcrPage.objects.values_list("page", flat=True)) == [1]
    # The retry reads on from page 2, and has read every page at the end of its turn.
    assert resource_ingest(resource_id=resource_id, requeue=requeue) == IngestResult.READY
    assert Resource.objects.get(pk=resource_id).attempts == 2
    text = " ".join(text for text, _, _ in _passages(resource_id))
    assert "Juicer J6" in text and "warranty covers" in text


def test_a_turn_ends_between_the_tables_and_the_text_of_a_page_and_keeps_its_tables(
    owner: Tenant, outsider: Tenant, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page of tables holds a worker longer than a turn: the turn ends
    between two steps of the page (a table, the page's text), the tables
    read so far kept, and no table is read twice."""
    from tests.page_images import table_image
    from tests.resources.test_ocr_tables import ABOVE, PREMIUMS

    pages = [table_image(PREMIUMS, above=ABOVE), page_images([SENTENCES[1]], dpi=300)[0]]
    settings.OCR_PAGES_PER_TURN = 0
    once = _upload(outsider, scanned_pdf(pages, dpi=300))
    assert resource_ingest(resource_id=once) == IngestResult.READY

    settings.OCR_PAGES_PER_TURN = 2
    monkeypatch.setattr(ocr_turn, "TURN_SECONDS", 0.0)  # every turn ends after its first step
    real, tables_read = ocr._table, []

    def counted(*args: Any, **kwargs: Any) -> Any:
        tables_read.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(ocr, "_table", counted)
    turned = _upload(owner, scanned_pdf(pages, dpi=300))
    _, requeue = _requeued()
    assert resource_ingest(resource_id=turned, requeue=requeue) == IngestResult.CONTINUING
    [part] = OcrPage.objects.filter(scan__resource_id=turned)
    assert (part.page, part.complete, len(part.regions)) == (1, False, 1)
    assert "Amber Basic plan | 35 | PRE-1000" in part.regions[0][0]
    assert OcrScan.objects.get(resource_id=turned).pages_read == 0
    # The next turn reads page 1's text only, then page 2.
    assert resource_ingest(resource_id=turned, requeue=requeue) == IngestResult.CONTINUING
    assert OcrScan.objects.get(resource_id=turned).pages_read == 1
    assert OcrPage.objects.get(scan__resource_id=turned, page=1).complete
    assert resource_ingest(resource_id=turned, requeue=requeue) == IngestResult.READY
    assert len(tables_read) == 1
    assert _passages(turned) == _passages(once)
    assert not OcrPage.objects.exists()
