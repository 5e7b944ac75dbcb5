"""A ruled table on a scanned page becomes passages that answer by row, as a
CSV's: found from its lines, its cells read apart (the document's models and
English's, each cell as the surer reading), the header with each group of
rows, each group with its page and box (docs/ocr.md, "Tables").

The pages are drawn here (tests/page_images.py ``table_image``) and read by
the real Tesseract (the ``tesseract`` fixture of tests/resources/test_ocr.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from pytest_django import Settings

from resources.parsing import ParsedDocument, detect_content_type, parse_document
from resources.parsing.ocr_regions import Region
from resources.parsing.ocr_tables import find_grids
from tests.conftest import Tenant
from tests.page_images import image_bytes, page_images, scanned_pdf, table_image
from tests.resources.test_ocr import tesseract  # noqa: F401  (the fixture: Tesseract and its models)

pytestmark = pytest.mark.slow

PLANS = ["Amber Basic plan", "Cobalt Family plan", "Crimson Senior plan", "Ivory Travel plan"]
PREMIUMS = [["Plan", "Monthly premium (EUR)", "Code"]] + [
    [plan, f"{35 + 11 * n}", f"PRE-{1000 + 37 * n}"] for n, plan in enumerate(PLANS)
]
PERSIAN = [["طرح", "حق بیمه ماهانه (یورو)", "کد"]] + [
    [plan, f"{35 + 11 * n}", f"PRE-{1000 + 37 * n}"]
    for n, plan in enumerate(["طرح پایه کهربایی", "طرح خانواده لاجوردی", "طرح سالمندان ارغوانی"])
]
ABOVE = "Premiums of the plans offered in 2025, per month."


def _parse(data: bytes, language: str | None = None) -> ParsedDocument:
    return parse_document(data, content_type=detect_content_type(data), language=language)


def _noisy(image: Any) -> Any:
    from bench.ocr_quality import scanned

    return scanned(image, seed=3)


def test_a_scanned_table_answers_by_row_under_its_header_below_its_paragraph(settings: Settings) -> None:
    settings.TABLE_ROWS_PER_PASSAGE = 2
    document = _parse(image_bytes([table_image(PREMIUMS, above=ABOVE)]), language="en")
    assert document.text.split("\n\n") == [
        ABOVE,
        "Table 1, rows 2-3\nPlan | Monthly premium (EUR) | Code"
        "\nAmber Basic plan | 35 | PRE-1000\nCobalt Family plan | 46 | PRE-1037",
        "Table 1, rows 4-5\nPlan | Monthly premium (EUR) | Code"
        "\nCrimson Senior plan | 57 | PRE-1074\nIvory Travel plan | 68 | PRE-1111",
    ]
    groups = [document.text.index(f"Table 1, rows {n}-") for n in (2, 4)]
    assert set(groups) <= document.headings
    first, second = (document.bbox_of(start, start + 20) for start in groups)
    paragraph = document.bbox_of(0, len(ABOVE))
    assert first and second and paragraph
    # Rows of the page, top to bottom, below the paragraph, inside the margins.
    assert paragraph[3] < first[1] < first[3] <= second[1] + 0.002 < second[3] < 0.9
    assert 0.1 < first[0] < first[2] < 0.9
    assert all(document.page_at(start) == 1 for start in groups)


def test_a_persian_table_reads_right_to_left_and_its_latin_codes_in_latin_letters() -> None:
    """The first column sits on the right; Persian's model reads Latin
    codes as Persian letters and digits, English's reading of them is surer."""
    document = _parse(scanned_pdf([table_image(PERSIAN, rtl=True, language="fa")]), language="fa")
    lines = document.text.split("\n")
    assert lines[1] == "طرح | حق بیمه ماهانه (یورو) | کد"
    assert "طرح پایه کهربایی | 35 | PRE-1000" in lines
    assert "طرح سالمندان ارغوانی | 57 | PRE-1074" in lines


def test_a_table_a_scanner_turned_and_speckled_keeps_its_rows() -> None:
    document = _parse(image_bytes([_noisy(table_image(PREMIUMS, above=ABOVE))]), language="en")
    assert "Plan | Monthly premium (EUR) | Code" in document.text
    rows = [line for line in document.text.split("\n") if line.count(" | ") == 2]
    assert sum(row in document.text for row in [" | ".join(r) for r in PREMIUMS[1:]]) >= 3, rows


def test_a_shaded_header_row_is_cells_not_a_rule() -> None:
    """Word's and Excel's grey header (25 % grey is level 191: darker than
    the 192 below which a scan's grey rule counts as ink) is no ruled line."""
    import numpy
    from PIL import Image

    page = table_image(PREMIUMS)
    [grid] = find_grids(page)
    x0, y0, _, y1 = grid.boxes[0]
    right = max(box[2] for box in grid.boxes if box[1] == y0)
    pixels = numpy.asarray(page).copy()
    header = pixels[y0:y1, x0:right]
    header[header > 128] = 191
    document = _parse(image_bytes([Image.fromarray(pixels)]), language="en")
    assert document.text.startswith("Table 1, rows 2-5\nPlan | Monthly premium (EUR) | Code\n")


def test_a_page_without_rules_has_no_table_and_a_framed_paragraph_is_none() -> None:
    from PIL import ImageDraw

    [page] = page_images([ABOVE, "Refunds are paid within 14 days."])
    assert find_grids(page) == []
    framed = page.copy()
    ImageDraw.Draw(framed).rectangle((250, 250, 2300, 520), outline=0, width=3)
    assert find_grids(framed) == []  # one cell: a box, not a table
    document = _parse(image_bytes([framed]), language="en")
    assert "Table" not in document.text and "Refunds are paid" in document.text


def test_a_grid_with_text_in_one_column_only_is_read_as_paragraphs() -> None:
    rows = [["Notes", ""], ["Bring your card.", ""], ["Arrive early.", ""]]
    document = _parse(image_bytes([table_image(rows)]), language="en")
    assert "|" not in document.text and "Bring your card." in document.text


def test_a_table_read_in_an_earlier_turn_is_kept_with_its_rows() -> None:
    from resources.parsing.ocr_tables import Table

    rows = [["Plan", "Fee"], ["Basic", "35"]]
    table = Table((0.1, 0.2, 0.8, 0.5), rows, [(0.1, 0.2, 0.8, 0.3), (0.1, 0.3, 0.8, 0.4)], "Fees")
    region = Region(text="Fees\nPlan | Fee\nBasic | 35", bbox=table.bbox, table=table)
    paragraph = Region(text="Rates.", bbox=(0.1, 0.1, 0.5, 0.15))
    assert Region.from_stored(region.stored()) == region
    assert Region.from_stored(paragraph.stored()) == paragraph
    assert paragraph.stored() == ["Rates.", 0.1, 0.1, 0.5, 0.15]  # as pages were kept before tables


@pytest.mark.django_db
def test_a_question_about_one_row_of_a_scan_finds_that_row_with_its_page_and_box(
    owner: Tenant, settings: Settings
) -> None:
    from tests.resources.test_ocr_ingestion import _search, _upload

    settings.TABLE_ROWS_PER_PASSAGE, settings.CHUNK_SIZE_TOKENS = 1, 30
    resource = _upload(owner, "premiums.png", image_bytes([table_image(PREMIUMS, above=ABOVE)]))
    assert resource.status == "ready", resource.error_message
    top = _search(owner, "What is the monthly premium of the Crimson Senior plan?").json()["data"]["items"][0]
    assert top["text"].startswith("Table 1, row")
    assert "\nPlan | Monthly premium (EUR) | Code\nCrimson Senior plan | 57 | PRE-1074" in top["text"]
    assert top["page"] == 1
    x0, y0, x1, y1 = top["bbox"]
    assert 0.1 < x0 < x1 < 0.9 and 0.1 < y0 < y1 < 0.5 and y1 - y0 < 0.03  # one row of the page


def test_grids_past_the_bounds_are_read_as_text_not_failed(
    monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    from resources.parsing import ocr_tables

    page = image_bytes([table_image(PREMIUMS)])
    settings.TABLE_MAX_COLUMNS = 2  # a table of three columns is no table to keep
    document = _parse(page, language="en")
    assert "Table 1" not in document.text and "Cobalt Family plan" in document.text
    settings.TABLE_MAX_COLUMNS = 100
    monkeypatch.setattr(ocr_tables, "MAX_TABLES", 0)  # none read as tables on a page
    document = _parse(page, language="en")
    assert "Table 1" not in document.text and "Cobalt Family plan" in document.text


def test_a_scanned_table_that_goes_on_over_the_page_keeps_its_header() -> None:
    pages = [table_image(PREMIUMS[:3], above=ABOVE), table_image(PREMIUMS[3:])]
    document = _parse(image_bytes(pages, format="TIFF"), language="en")
    assert document.text.split("\n\n")[1:] == [
        "Table 1, rows 2-3\nPlan | Monthly premium (EUR) | Code\nAmber Basic plan | 35 | PRE-1000"
        "\nCobalt Family plan | 46 | PRE-1037",
        "Table 1, rows 4-5\nPlan | Monthly premium (EUR) | Code\nCrimson Senior plan | 57 | PRE-1074"
        "\nIvory Travel plan | 68 | PRE-1111",
    ]


def test_a_speckled_page_is_told_from_a_clean_one() -> None:
    import numpy

    from resources.parsing.ocr_clean import speckled

    clean = table_image(PREMIUMS)
    assert not speckled(numpy.asarray(clean)) and speckled(numpy.asarray(_noisy(clean)))


def _faxed_tiff(image: Any) -> bytes:
    import io

    from bench.ocr_quality import FAX_DPI, faxed

    buffer = io.BytesIO()
    faxed(image, seed=3).save(buffer, format="TIFF", compression="group4", dpi=(FAX_DPI, FAX_DPI))
    return buffer.getvalue()


def test_a_faxed_table_with_thin_broken_rules_keeps_its_cells_and_rows() -> None:
    """A fax's rules are a pixel thin, a little turned and broken by its
    threshold; each gap would join two rows' cells into one."""
    from PIL import Image

    data = _faxed_tiff(table_image(PREMIUMS, above=ABOVE))
    page = Image.open(_bytes_io(data))
    assert page.mode == "1"
    [grid] = find_grids(page)
    assert len(grid.boxes) == 3 * len(PREMIUMS)
    document = _parse(data, language="en")
    assert "Plan | Monthly premium (EUR) | Code" in document.text
    assert sum(" | ".join(row) in document.text for row in PREMIUMS[1:]) >= 3, document.text


def test_a_speckled_cells_paper_is_made_white_and_its_letters_keep_their_dots() -> None:
    """Tesseract reads a speckled cell's paper as letters when its threshold
    falls between light and lighter paper."""
    import numpy
    from PIL import ImageFilter

    from resources.parsing.ocr_clean import cleaned as _cleaned

    page = table_image(PERSIAN, rtl=True, language="fa")
    [grid] = find_grids(page)
    x0, y0, x1, y1 = grid.boxes[3]
    clean = numpy.asarray(page)[y0 + 6 : y1 - 6, x0 + 6 : x1 - 6]
    blurred = numpy.asarray(page.filter(ImageFilter.GaussianBlur(1)), dtype=numpy.float32)
    noise = numpy.random.default_rng(3).normal(0, 25, blurred.shape)
    speckled = numpy.clip(blurred + noise, 0, 255).astype(numpy.uint8)  # as bench/ocr_quality.py scans
    cell = _cleaned(speckled[y0 + 6 : y1 - 6, x0 + 6 : x1 - 6])
    ink = clean < 128
    far = ~_dilated(ink, 3)
    assert (cell[far] == 255).mean() > 0.99  # the paper away from the letters is white
    assert (cell[ink] < 200).mean() > 0.9  # the letters (dots too) are kept


def _bytes_io(data: bytes) -> Any:
    import io

    return io.BytesIO(data)


def _dilated(mask: Any, iterations: int) -> Any:
    from scipy import ndimage

    return ndimage.binary_dilation(mask, iterations=iterations)


def test_a_faxs_lone_specks_go_and_its_letters_dots_stay() -> None:
    """A fax's line noise is lone black pixels, read as letters' dots; the
    dots of small Persian letters at 200 dpi are single pixels near them."""
    import numpy
    from PIL import Image

    from resources.parsing.ocr_clean import despeckled

    page = numpy.full((200, 200), 255, dtype=numpy.uint8)
    page[100:110, 50:90] = 0  # a letter's body
    page[113, 60] = page[113, 64] = 0  # its dots, below it
    page[20, 20] = page[180, 150] = page[40, 170] = 0  # specks, far from ink
    cleaned = numpy.asarray(despeckled(Image.fromarray(page)))
    assert cleaned[20, 20] == cleaned[180, 150] == cleaned[40, 170] == 255
    assert cleaned[113, 60] == cleaned[113, 64] == 0
    assert (cleaned[100:110, 50:90] == 0).all()
    grey = page.copy()
    grey[:, :100] = 200  # a grey page (a scan, not a fax) comes back as it was
    assert numpy.array_equal(numpy.asarray(despeckled(Image.fromarray(grey))), grey)


def test_a_photo_of_a_table_lit_from_one_side_and_turned_keeps_its_rows() -> None:
    """A phone's photo: the paper darkens across the page (below the grey
    of a rule's ink on its dark side), the page turned 1.2 degrees, a JPEG."""
    import io

    import numpy
    from PIL import Image, ImageFilter

    page = table_image(PREMIUMS, above=ABOVE).rotate(-1.2, resample=Image.Resampling.BICUBIC, fillcolor=255)
    pixels = numpy.asarray(page, dtype=numpy.float32)
    height, width = pixels.shape
    shade = 0.75 + 0.25 * numpy.linspace(0, 1, width)[None, :] * numpy.linspace(1, 0.6, height)[:, None]
    noise = numpy.random.default_rng(5).normal(0, 8, pixels.shape)
    photo = Image.fromarray(numpy.clip(pixels * shade + noise, 0, 255).astype(numpy.uint8))
    jpeg = io.BytesIO()
    photo.filter(ImageFilter.GaussianBlur(0.8)).convert("RGB").save(jpeg, format="JPEG", quality=70)
    document = _parse(jpeg.getvalue(), language="en")
    assert "Plan | Monthly premium (EUR) | Code" in document.text
    assert sum(" | ".join(row) in document.text for row in PREMIUMS[1:]) >= 3, document.text


def test_an_evenly_lit_page_comes_back_as_it_was() -> None:
    from resources.parsing.ocr_clean import evenly_lit

    page = table_image(PREMIUMS)
    assert evenly_lit(page) is page
