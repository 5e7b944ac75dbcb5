"""The passage page's page image in a real browser (headless Chromium,
tests/browser.py) against a live server: the PNG loads, and the outlined box
sits over the image exactly where the passage's ``bbox`` says. A scan read by
the real Tesseract, ingested here without a worker; real PostgreSQL and the
real embedding model. Screenshot as in tests/console/test_browser.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from pytest_django.live_server_helper import LiveServer

from retrieval.models import Passage
from tests.browser import log_in
from tests.conftest import Tenant
from tests.console.test_browser import _curator, _screenshot, _wait
from tests.console.test_page_images import LONG, SHORT, _uploaded
from tests.page_images import image_bytes, page_images
from tests.resources.test_ocr import tesseract  # noqa: F401  (the fixture: Tesseract's models present)
from tests.staff import PASSWORD

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

# The image's and the outlined box's places on the screen, in one script call.
READ_FIGURE = """
    const img = document.querySelector(".page-figure img");
    const box = document.querySelector(".page-figure .page-region");
    if (!img || !img.complete || !img.naturalWidth || !box) return null;
    const rect = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; };
    return {image: rect(img), box: rect(box), natural: [img.naturalWidth, img.naturalHeight]};
"""


def test_the_passage_page_outlines_the_passage_over_its_page_image(
    browser: WebDriver, live_server: LiveServer, owner: Tenant, settings: Any
) -> None:
    settings.CHUNK_SIZE_TOKENS = 48
    settings.CHUNK_OVERLAP_TOKENS = 0
    _curator(owner)
    resource = _uploaded(owner, "scan.png", image_bytes(page_images([SHORT, LONG], dpi=150)))
    passage = Passage.objects.filter(resource=resource, bbox__isnull=False).order_by("-ordinal").first()
    assert passage is not None and passage.page == 1 and passage.bbox is not None

    log_in(browser, live_server.url, "curator", PASSWORD)
    browser.get(f"{live_server.url}/admin/console/{owner.workspace.id}/passages/{passage.id}/")
    figure = _wait(browser).until(lambda d: d.execute_script(READ_FIGURE))
    assert figure["natural"] == [1236, 1600]  # 1275 x 1650, shrunk to the bound
    left, top, width, height = figure["image"]
    x0, y0, x1, y1 = passage.bbox
    expected = [left + x0 * width, top + y0 * height, (x1 - x0) * width, (y1 - y0) * height]
    assert figure["box"] == pytest.approx(expected, abs=1.0)
    _screenshot(browser, "console-passage-page")
