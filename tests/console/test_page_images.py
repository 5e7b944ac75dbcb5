"""A resource's page drawn as a PNG (``console:page-image``), and the passage
page and the playground showing it with the passage's box outlined.

Real PostgreSQL, the real embedding model, real PDFium and Pillow, and the
real Tesseract for the scanned document ingested through the API (the
ingestion runs here, without a worker). The documents are made here: text
PDFs (tests/resources/files.py) and scanned pages (tests/page_images.py),
with more ink on one page than the others, so the ink of the PNG tells
which page was drawn.
"""

from __future__ import annotations

import hashlib
import html
import io
import re
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from resources.ingestion import resource_ingest
from resources.models import Resource, ResourceFile, ResourceStatus
from resources.page_images import PAGE_IMAGE_MAX_SIDE
from resources.parsing.detect import PDF, PNG, TIFF
from retrieval.models import Passage
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant
from tests.page_images import image_bytes, page_images, scanned_pdf
from tests.resources.files import make_pdf
from tests.resources.test_ocr import tesseract  # noqa: F401  (the fixture: Tesseract's models present)
from tests.staff import Staff, make_staff

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

SHORT = "Opening hours are nine to five."
# Wraps to some twenty-five lines, words of varied widths (no columns for
# the OCR to see): ink down past the middle of the page.
LONG = " ".join(
    f"Order {n} placed on a {day} is refunded within {n + 3} days of its return."
    for n, day in enumerate(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"] * 4)
)


def _stored(tenant: Tenant, title: str, data: bytes, content_type: str) -> Resource:
    """A resource with its original bytes, as an upload stores them."""
    resource = Resource.objects.create(
        workspace=tenant.workspace,
        title=title,
        filename=title,
        content_type=content_type,
        size_bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        status=ResourceStatus.READY,
    )
    ResourceFile.objects.create(resource=resource, data=data)
    return resource


def _uploaded(tenant: Tenant, name: str, data: bytes) -> Resource:
    response = tenant.client("admin").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/resources/",
        {"file": SimpleUploadedFile(name, data)},
        format="multipart",
    )
    assert response.status_code == 202, response.json()
    resource_ingest(resource_id=response.json()["data"]["id"])
    resource = Resource.objects.get(id=response.json()["data"]["id"])
    assert resource.status == ResourceStatus.READY, resource.error_message
    return resource


def _url(resource: Resource, page: int, workspace_id: Any = None) -> str:
    return f"/admin/console/{workspace_id or resource.workspace_id}/resources/{resource.id}/pages/{page}.png"


def _png(client: Client, url: str) -> Any:
    from PIL import Image

    response = client.get(url)
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"] == "image/png"
    image = Image.open(io.BytesIO(response.content))
    assert image.format == "PNG"
    return image


def _ink(image: Any) -> tuple[float, float, float, float]:
    """Where the dark pixels are, page-relative: x0, y0, x1, y1."""
    box = image.convert("L").point(lambda v: 255 if v < 128 else 0).getbbox()
    assert box is not None, "a blank page"
    width, height = image.size
    return box[0] / width, box[1] / height, box[2] / width, box[3] / height


def _error(response: Any, status: int) -> str:
    """The message of a 404 in the error envelope."""
    assert response.status_code == status == 404, response.content[:300]
    body = response.json()["error"]
    assert body["code"] == "not_found"
    return str(body["message"])


@pytest.fixture
def small_chunks(settings: Any) -> None:
    """Passages of a few lines without overlap: a passage starts on each page of a short document."""
    settings.CHUNK_SIZE_TOKENS = 32
    settings.CHUNK_OVERLAP_TOKENS = 0


def test_a_text_pdfs_page_is_drawn_within_the_bound(owner: Tenant, curator: Staff) -> None:
    resource = _stored(owner, "guide.pdf", make_pdf([SHORT, "\n".join([SHORT] * 40), SHORT]), PDF)
    second = _png(curator.client, _url(resource, 2))
    assert max(second.size) == PAGE_IMAGE_MAX_SIDE
    assert second.size[0] < second.size[1]  # a letter page, upright
    assert _ink(second)[3] > 0.6  # forty lines
    assert _ink(_png(curator.client, _url(resource, 3)))[3] < 0.15  # one line


def test_a_scanned_pdfs_page_is_its_scan(owner: Tenant, curator: Staff) -> None:
    pages = page_images([SHORT], dpi=100) + page_images([LONG], dpi=100)
    resource = _stored(owner, "scan.pdf", scanned_pdf(pages, dpi=100), PDF)
    assert _ink(_png(curator.client, _url(resource, 1)))[3] < 0.2
    assert _ink(_png(curator.client, _url(resource, 2)))[3] > 0.4


def test_a_tiffs_page_is_its_frame_shrunk_to_the_bound(owner: Tenant, curator: Staff) -> None:
    frames = page_images([SHORT], dpi=100) + page_images([LONG], dpi=200) + page_images([SHORT], dpi=100)
    resource = _stored(owner, "scan.tiff", image_bytes(frames, format="TIFF", dpi=100), TIFF)
    second = _png(curator.client, _url(resource, 2))
    assert second.size == (1236, PAGE_IMAGE_MAX_SIDE)  # 1700 x 2200, shrunk
    assert _ink(second)[3] > 0.4
    third = _png(curator.client, _url(resource, 3))
    assert third.size == (850, 1100)  # never enlarged
    assert _ink(third)[3] < 0.2


def test_the_image_is_private_to_the_browser(owner: Tenant, curator: Staff) -> None:
    resource = _stored(owner, "scan.png", image_bytes(page_images([SHORT], dpi=50)), PNG)
    response = curator.client.get(_url(resource, 1))
    assert response.status_code == 200
    assert "private" in response["Cache-Control"] and "public" not in response["Cache-Control"]


def test_a_page_out_of_range_or_without_pages_is_a_clear_404(owner: Tenant, curator: Staff) -> None:
    pdf = _stored(owner, "guide.pdf", make_pdf([SHORT, SHORT]), PDF)
    assert "no page 3; it has 2" in _error(curator.client.get(_url(pdf, 3)), 404)
    assert "no page 0" in _error(curator.client.get(_url(pdf, 0)), 404)
    png = _stored(owner, "scan.png", image_bytes(page_images([SHORT], dpi=50)), PNG)
    assert "no page 2; it has 1" in _error(curator.client.get(_url(png, 2)), 404)
    text = ingest_text(owner.workspace, "Notes", SHORT)
    ResourceFile.objects.create(resource=text, data=SHORT.encode())
    assert "has no pages" in _error(curator.client.get(_url(text, 1)), 404)


def test_gone_or_damaged_bytes_are_a_clear_404(owner: Tenant, curator: Staff) -> None:
    gone = _stored(owner, "guide.pdf", make_pdf([SHORT]), PDF)
    ResourceFile.objects.filter(resource=gone).delete()
    assert "no longer stored" in _error(curator.client.get(_url(gone, 1)), 404)
    damaged = _stored(owner, "broken.pdf", b"%PDF-1.4\n" + b"\x00garbage" * 40, PDF)
    assert "could not be read" in _error(curator.client.get(_url(damaged, 1)), 404)
    cut = _stored(owner, "cut.png", image_bytes(page_images([SHORT], dpi=50))[:200], PNG)
    assert "could not be read" in _error(curator.client.get(_url(cut, 1)), 404)


def test_an_image_over_the_pixel_bound_is_refused_before_decoding(
    owner: Tenant, curator: Staff, settings: Any
) -> None:
    settings.OCR_MAX_IMAGE_PIXELS = 1_000_000
    big = page_images([SHORT], dpi=150)  # 1275 x 1650
    png = _stored(owner, "scan.png", image_bytes(big), PNG)
    assert "too large" in _error(curator.client.get(_url(png, 1)), 404)
    pdf = _stored(owner, "scan.pdf", scanned_pdf(big, dpi=150), PDF)
    assert "too large" in _error(curator.client.get(_url(pdf, 1)), 404)


def test_another_organizations_page_is_a_404_and_permissions_a_403(
    owner: Tenant, outsider: Tenant, curator: Staff, root: Staff
) -> None:
    theirs = _stored(outsider, "guide.pdf", make_pdf([SHORT]), PDF)
    # Their workspace, and their resource under the curator's own workspace: as if missing.
    assert _error(curator.client.get(_url(theirs, 1)), 404) == "Not found."
    assert _error(curator.client.get(_url(theirs, 1, owner.workspace.id)), 404) == "Not found."
    bare = make_staff("bare", organization=owner.organization, permissions=False)
    mine = _stored(owner, "mine.pdf", make_pdf([SHORT]), PDF)
    assert bare.client.get(_url(mine, 1)).status_code == 403
    assert bare.client.get(_url(theirs, 1)).status_code == 404
    # Not staff at all: the admin's login page.
    assert Client().get(_url(mine, 1)).status_code == 302
    assert root.client.get(_url(theirs, 1)).status_code == 200


@pytest.mark.usefixtures("small_chunks")
def test_the_passage_page_outlines_the_scanned_passage_on_its_page(owner: Tenant, curator: Staff) -> None:
    pages = page_images([SHORT], dpi=150) + page_images([LONG], dpi=150)
    resource = _uploaded(owner, "scan.pdf", scanned_pdf(pages, dpi=150))
    passage = Passage.objects.filter(resource=resource, page=2).first()
    assert passage is not None and passage.bbox is not None
    page = curator.client.get(f"/admin/console/{owner.workspace.id}/passages/{passage.id}/")
    assert page.status_code == 200
    content = page.content.decode()
    x0, y0, x1, y1 = passage.bbox
    expected = (
        f"left: {x0 * 100:.2f}%; top: {y0 * 100:.2f}%; width: {(x1 - x0) * 100:.2f}%; "
        f"height: {(y1 - y0) * 100:.2f}%"
    )
    assert f'style="{expected}"' in content
    src = re.search(
        r'<figure class="page-figure" data-page="2">\s*<div class="page-image">\s*<img src="([^"]+)"', content
    )
    assert src is not None and html.unescape(src.group(1)) == _url(resource, 2)
    # The outlined region is where the passage's ink is on the drawn page.
    image = _png(curator.client, src.group(1))
    width, height = image.size
    region = image.crop((round(x0 * width), round(y0 * height), round(x1 * width), round(y1 * height)))
    ink = _ink(image)
    assert _ink(region) and ink[1] >= y0 - 0.02 and ink[3] <= y1 + 0.02


@pytest.mark.usefixtures("small_chunks")
def test_a_text_layer_passage_shows_its_page_without_a_box_and_plain_text_no_page(
    owner: Tenant, curator: Staff
) -> None:
    resource = _uploaded(owner, "guide.pdf", make_pdf([SHORT, LONG]))
    passage = Passage.objects.filter(resource=resource, page=2).first()
    assert passage is not None
    content = curator.client.get(
        f"/admin/console/{owner.workspace.id}/passages/{passage.id}/"
    ).content.decode()
    assert f'<img src="{_url(resource, 2)}"' in content
    assert "page-region" not in content and "is not known (a text layer)" in content
    text = Passage.objects.get(resource=ingest_text(owner.workspace, "Notes", SHORT))
    content = curator.client.get(f"/admin/console/{owner.workspace.id}/passages/{text.id}/").content.decode()
    assert "page-figure" not in content


@pytest.mark.usefixtures("small_chunks")
def test_the_playground_shows_each_retrieved_passages_page(owner: Tenant, curator: Staff) -> None:
    resource = _uploaded(owner, "refunds.pdf", make_pdf([SHORT, LONG]))
    response = curator.client.post(
        f"/admin/console/{owner.workspace.id}/playground/", {"question": "How long do refunds take?"}
    )
    assert response.status_code == 200
    content = response.content.decode()
    shown = 0
    for passage in Passage.objects.filter(resource=resource):
        details = re.search(rf'id="passage-{passage.id}".*?</details>', content, re.S)
        if details is not None:
            shown += 1
            assert f'<img src="{_url(resource, passage.page or 0)}"' in details.group(0)
    assert shown
