"""Images and scanned PDF pages are read by OCR (docs/ocr.md).

The pages are drawn here, at test time (tests/page_images.py: Pillow with
HarfBuzz shaping, DejaVu Sans), and read by the real Tesseract with Debian's
``eng``, ``fas`` and ``ara`` models (``tesseract-ocr tesseract-ocr-fas
tesseract-ocr-ara``, installed by scripts/test; missing, these tests fail
under CI and skip elsewhere). A clean page must read back within the
character error rates docs/ocr.md promises (bench/ocr_quality.py measures
them on more text).
"""

from __future__ import annotations

import io
import shutil
from typing import Any

import pytest
from pytest_django import Settings

from resources.parsing import ParsedDocument, ParseError, detect_content_type, parse_document
from resources.parsing.detect import JPEG, PNG, TIFF
from tests.page_images import character_error_rate, image_bytes, page_images, scanned_pdf
from tests.parts import part_missing
from tests.resources.files import make_pdf

# Each reading runs the real Tesseract: seconds, not milliseconds.
pytestmark = pytest.mark.slow

ENGLISH = [
    "The Juicer J6 presses fruit and vegetables into fresh juice in under a minute.",
    "Refunds are paid within 14 days of the return reaching our warehouse.",
]
PERSIAN = [
    "بازپرداخت در چهارده روز پس از رسیدن کالا به انبار انجام می‌شود.",
    "آبمیوه‌گیری جی۶ میوه و سبزی را در کمتر از یک دقیقه به آب تازه تبدیل می‌کند.",
]
ARABIC = [
    "يتم الاسترداد خلال أربعة عشر يوما من وصول المرتجع إلى المستودع.",
    "تعصر العصارة الفواكه والخضروات في أقل من دقيقة واحدة.",
]


@pytest.fixture(autouse=True)
def tesseract() -> None:
    import pytesseract

    if shutil.which("tesseract") is None:
        part_missing(
            "tesseract is absent (apt-get install tesseract-ocr tesseract-ocr-fas tesseract-ocr-ara)"
        )
    missing = {"eng", "fas", "ara"} - set(pytesseract.get_languages(config=""))
    if missing:
        part_missing(f"Tesseract's {sorted(missing)} data is absent (apt-get install tesseract-ocr-fas …)")


def _parse(data: bytes, language: str | None = None) -> ParsedDocument:
    return parse_document(data, content_type=detect_content_type(data), language=language)


def _error(data: bytes, language: str | None = None) -> ParseError:
    with pytest.raises(ParseError) as info:
        _parse(data, language)
    return info.value


def _png(paragraphs: list[str], *, rtl: bool = False, language: str = "en", dpi: int = 200) -> bytes:
    return image_bytes(page_images(paragraphs, dpi=dpi, rtl=rtl, language=language))


def test_image_formats_are_detected_by_their_signature() -> None:
    image = page_images(["x"], dpi=50)
    assert detect_content_type(image_bytes(image, format="PNG")) == PNG
    assert detect_content_type(image_bytes(image, format="JPEG")) == JPEG
    assert detect_content_type(image_bytes(image, format="TIFF"), filename="scan.txt") == TIFF


def test_an_english_png_reads_back_with_each_paragraph_where_it_sits() -> None:
    document = _parse(_png(ENGLISH))
    assert character_error_rate(document.text, "\n\n".join(ENGLISH)) <= 0.03
    assert document.pages == ((0, 1),)
    assert len(document.regions) == 2
    (first_start, _, first_box), (_, _, second_box) = document.regions
    assert first_start == 0
    # On the page: x0 < x1 and y0 < y1 within 0 to 1, the first paragraph above the second.
    for x0, y0, x1, y1 in (first_box, second_box):
        assert 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1
    assert first_box[3] <= second_box[1]
    # The left margin is an inch of the 8.5-inch page.
    assert first_box[0] == pytest.approx(1 / 8.5, abs=0.02)


@pytest.mark.parametrize(("language", "paragraphs"), [("fa", PERSIAN), ("ar", ARABIC)])
def test_persian_and_arabic_are_read_with_the_documents_language(
    language: str, paragraphs: list[str]
) -> None:
    document = _parse(_png(paragraphs, rtl=True, language=language, dpi=300), language)
    assert character_error_rate(document.text, "\n\n".join(paragraphs)) <= 0.08
    # Right-aligned: each paragraph's box ends at the right margin.
    assert all(box[2] == pytest.approx(1 - 1 / 8.5, abs=0.02) for _, _, box in document.regions)


def test_without_a_language_the_configured_models_read(settings: Settings) -> None:
    settings.OCR_LANGUAGES = "fas"
    document = _parse(_png(PERSIAN, rtl=True, language="fa", dpi=300))
    assert character_error_rate(document.text, "\n\n".join(PERSIAN)) <= 0.08


def test_every_frame_of_a_tiff_is_a_page() -> None:
    pages = page_images([ENGLISH[0]], dpi=150) + page_images([ENGLISH[1]], dpi=150)
    document = _parse(image_bytes(pages, format="TIFF"))
    second = document.text.index("Refunds")
    assert document.page_at(0) == 1
    assert document.page_at(second) == 2


def test_a_pdf_page_without_a_text_layer_is_read_by_ocr() -> None:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for part in (
        make_pdf(["A page with its own text layer."]),
        scanned_pdf(page_images([ENGLISH[1]], dpi=200)),
    ):
        for page in PdfReader(io.BytesIO(part)).pages:
            writer.add_page(page)
    buffer = io.BytesIO()
    writer.write(buffer)
    document = _parse(buffer.getvalue())
    assert document.text.startswith("A page with its own text layer.")
    scanned = document.text.index("Refunds")
    assert document.page_at(scanned) == 2
    assert character_error_rate(document.text[scanned:], ENGLISH[1]) <= 0.03
    # Only the scanned page's paragraph has a box.
    assert [start for start, _, _ in document.regions] == [scanned]


def test_without_tesseract_the_error_says_what_to_install(monkeypatch: Any) -> None:
    import pytesseract

    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/tesseract")
    error = _error(_png(ENGLISH))
    assert error.code == "ocr_unavailable"
    assert "Tesseract is not installed" in error.message
    assert "apt-get install tesseract-ocr" in error.message


def test_a_missing_language_model_is_named(settings: Settings) -> None:
    settings.OCR_LANGUAGES = "eng+kor"
    error = _error(_png(ENGLISH))
    assert error.code == "ocr_unavailable"
    assert "kor is not installed" in error.message


def test_the_page_budget_ends_the_document(settings: Settings) -> None:
    settings.OCR_MAX_PAGES = 1
    pages = page_images([ENGLISH[0]], dpi=100) + page_images([ENGLISH[1]], dpi=100)
    error = _error(image_bytes(pages, format="TIFF"))
    assert error.code == "file_too_complex"
    assert "OCR_MAX_PAGES" in error.message


def test_the_time_budget_ends_the_document(settings: Settings) -> None:
    settings.OCR_TIMEOUT_SECONDS = 0
    error = _error(_png(ENGLISH, dpi=100))
    assert error.code == "ingest_timeout"
    assert "OCR_TIMEOUT_SECONDS" in error.message


def test_an_image_over_the_pixel_bound_is_refused(settings: Settings) -> None:
    settings.OCR_MAX_IMAGE_PIXELS = 1_000_000
    error = _error(_png(ENGLISH, dpi=150))  # 1275 x 1650 pixels
    assert error.code == "file_too_complex"
    assert "OCR_MAX_IMAGE_PIXELS" in error.message


def test_a_damaged_image_is_corrupt() -> None:
    assert _error(_png(ENGLISH, dpi=100)[:200]).code == "corrupt_file"


def test_a_blank_image_is_empty() -> None:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("L", (400, 400), 255).save(buffer, format="PNG")
    error = _error(buffer.getvalue())
    assert error.code == "empty_document"


def test_tesseract_runs_on_one_thread_unless_the_server_says_otherwise(monkeypatch: Any) -> None:
    """Tesseract's OpenMP threads spin on shared cores (a table page five
    times slower); the limit is Tesseract's alone, not this process's."""
    import os

    import pytesseract

    from resources.parsing import ocr

    monkeypatch.delenv("OMP_THREAD_LIMIT", raising=False)
    document = parse_document(image_bytes(page_images(["The clinic opens at eight."])), content_type=PNG)
    assert "clinic opens" in document.text
    assert pytesseract.pytesseract.environ["OMP_THREAD_LIMIT"] == "1"
    assert dict(pytesseract.pytesseract.environ)["PATH"] == os.environ["PATH"]
    assert "OMP_THREAD_LIMIT" not in os.environ
    monkeypatch.setenv("OMP_THREAD_LIMIT", "4")
    assert ocr._ENVIRON["OMP_THREAD_LIMIT"] == "4"
