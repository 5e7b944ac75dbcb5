# ruff: noqa: RUF001, RUF002  (Arabic-script letters beside Latin ones are the point)
"""A PDF's ruled tables become passages that answer by row, each group of
rows under its header, with its page and box (docs/ingestion.md, "Tables");
the text around them stays, once, where it sits."""

from __future__ import annotations

import io
import time
from typing import Any

import pytest
from pytest_django import Settings

from resources.parsing import ParsedDocument, ParseError, parse_document
from resources.parsing.detect import PDF
from tests.conftest import Tenant
from tests.resources.files import make_pdf, make_pdf_with_content, make_table_pdf

PLANS = ["Basic plan", "Family plan", "Senior plan", "Travel plan", "Student plan", "Dental plan"]
PREMIUMS = [
    ["Plan", "2024", "2025"],
    *[[plan, f"{40 + 7 * n}", f"{45 + 9 * n}"] for n, plan in enumerate(PLANS)],
]
BEFORE = "Monthly premiums in euros, by plan and year.\nPrices are set each January."
AFTER = "Premiums include tax and are paid monthly."


def _parse(data: bytes, **kwargs: Any) -> ParsedDocument:
    return parse_document(data, content_type=PDF, **kwargs)


def test_a_ruled_table_keeps_its_header_with_each_group_between_its_paragraphs(settings: Settings) -> None:
    settings.TABLE_ROWS_PER_PASSAGE = 2
    document = _parse(make_table_pdf(PREMIUMS, before=BEFORE, after=AFTER))
    assert document.text.split("\n\n") == [
        BEFORE,
        "Table 1, rows 2-3\nPlan | 2024 | 2025\nBasic plan | 40 | 45\nFamily plan | 47 | 54",
        "Table 1, rows 4-5\nPlan | 2024 | 2025\nSenior plan | 54 | 63\nTravel plan | 61 | 72",
        "Table 1, rows 6-7\nPlan | 2024 | 2025\nStudent plan | 68 | 81\nDental plan | 75 | 90",
        AFTER,
    ]
    groups = [document.text.index(f"Table 1, rows {n}-") for n in (2, 4, 6)]
    assert set(groups) <= document.headings
    # Each group with its page and the box around its rows, top to bottom.
    boxes = [document.bbox_of(start, start + 20) for start in groups]
    assert all(document.page_at(start) == 1 for start in groups)
    assert all(box is not None and 0 < box[0] < box[2] < 1 and 0 < box[1] < box[3] < 1 for box in boxes)
    assert [box[1] for box in boxes if box] == sorted(box[1] for box in boxes if box)
    # Rows of 16 points on a page of 792: two rows are about 0.04 high.
    assert all(box and abs(box[3] - box[1] - 32 / 792) < 0.002 for box in boxes)
    # The paragraphs have no box: only what is known is said.
    assert document.bbox_of(0, 10) is None


def test_a_first_row_of_one_cell_across_the_table_names_it() -> None:
    document = _parse(make_table_pdf(PREMIUMS[:3], caption="Monthly premiums (EUR)", before="Rates."))
    assert document.text == (
        "Rates.\n\nMonthly premiums (EUR), rows 2-3\nPlan | 2024 | 2025"
        "\nBasic plan | 40 | 45\nFamily plan | 47 | 54"
    )


def test_tables_are_numbered_through_the_pdf_with_their_pages() -> None:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for _ in range(2):
        writer.add_page(PdfReader(io.BytesIO(make_table_pdf(PREMIUMS[:3], before="Rates."))).pages[0])
    out = io.BytesIO()
    writer.write(out)
    document = _parse(out.getvalue())
    first, second = document.text.index("Table 1, rows 2-3"), document.text.index("Table 2, rows 2-3")
    assert (document.page_at(first), document.page_at(second)) == (1, 2)


def test_a_page_of_text_has_no_table_and_reads_as_before() -> None:
    document = _parse(
        make_pdf(["Premiums by plan.\nThe Family plan costs 54 euros in 2025.", "Second page."])
    )
    assert document.text == "Premiums by plan.\nThe Family plan costs 54 euros in 2025.\n\nSecond page."
    assert document.regions == ()


def test_rules_and_a_framed_paragraph_are_not_tables() -> None:
    content = (
        b"BT /F1 14 Tf 50 760 Td (Premiums) Tj ET 50 752 m 560 752 l S "
        b"BT /F1 11 Tf 60 720 Td (A note in a box: prices change each January.) Tj ET "
        b"50 700 500 40 re S 50 690 m 560 690 l S 50 680 m 560 680 l S "
        b"BT /F1 11 Tf 50 660 Td (Two columns of text are not a table either.) Tj ET"
    )
    document = _parse(make_pdf_with_content(content))
    assert "Table" not in document.text
    assert "A note in a box: prices change each January." in document.text
    assert document.regions == ()


def test_a_dense_grid_is_not_looked_at_and_keeps_its_text() -> None:
    lines = [f"{20 + 3.8 * i} 20 m {20 + 3.8 * i} 770 l S" for i in range(150)]
    lines += [f"20 {20 + 3.9 * i} m 590 {20 + 3.9 * i} l S" for i in range(190)]
    content = "BT /F1 11 Tf 50 780 Td (Graph paper.) Tj ET\n" + "\n".join(lines)
    started = time.monotonic()
    document = _parse(make_pdf_with_content(content.encode()))
    assert document.text == "Graph paper."
    assert time.monotonic() - started < 5  # cells from 28,500 crossings take pdfplumber 19 s


def test_a_pdf_pdfplumber_cannot_read_keeps_pypdf_s_text(monkeypatch: pytest.MonkeyPatch) -> None:
    import pdfplumber

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("pdfminer could not parse it")

    monkeypatch.setattr(pdfplumber, "open", broken)
    document = _parse(make_table_pdf(PREMIUMS, before=BEFORE))
    assert "Table" not in document.text
    assert "Family plan 47 54" in document.text and BEFORE in document.text


def test_pages_pdfminer_counts_otherwise_than_pypdf_keep_pypdf_s_text() -> None:
    # One page object listed twice: two pages to pypdf, one to pdfminer.
    content = make_table_pdf(PREMIUMS, before=BEFORE)
    document = _parse(content.replace(b"/Kids [4 0 R] /Count 1", b"/Kids [4 0 R 4 0 R] /Count 2"))
    assert "Table" not in document.text
    assert document.text.count("Family plan 47 54") == 2


def test_the_task_soft_time_limit_passes_through_the_table_finder(monkeypatch: pytest.MonkeyPatch) -> None:
    from celery.exceptions import SoftTimeLimitExceeded

    def expired(*args: Any, **kwargs: Any) -> Any:
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr("resources.parsing.pdf_tables._page_parts", expired)
    with pytest.raises(SoftTimeLimitExceeded):
        _parse(make_table_pdf(PREMIUMS))


def test_a_table_over_the_column_bound_is_too_complex(settings: Settings) -> None:
    settings.TABLE_MAX_COLUMNS = 2
    with pytest.raises(ParseError) as info:
        _parse(make_table_pdf(PREMIUMS))
    assert info.value.code == "file_too_complex"
    assert "TABLE_MAX_COLUMNS" in info.value.message


def test_the_parse_deadline_holds_on_a_page_with_a_table() -> None:
    with pytest.raises(ParseError) as info:
        _parse(make_table_pdf(PREMIUMS), timeout=0)
    assert info.value.code == "ingest_timeout"


@pytest.mark.django_db
@pytest.mark.slow
def test_a_question_about_one_row_finds_that_row_with_its_header(owner: Tenant, settings: Settings) -> None:
    from tests.resources.test_ocr_ingestion import _search, _upload

    settings.TABLE_ROWS_PER_PASSAGE, settings.CHUNK_SIZE_TOKENS = 4, 60
    letters = "ABCDEFGHIJKLMNOPQRST"
    rows = [
        ["Plan", "2023", "2024", "2025"],
        *[[f"Plan {c}", f"{30 + n}", f"{40 + n}", f"{50 + 2 * n}"] for n, c in enumerate(letters)],
    ]
    resource = _upload(owner, "premiums.pdf", make_table_pdf(rows, before=BEFORE, after=AFTER))
    assert resource.status == "ready", resource.error_message
    response = _search(owner, "What is the premium for plan B in 2025?")
    assert response.status_code == 200, response.json()
    top = response.json()["data"]["items"][0]
    assert "Plan B | 31 | 41 | 52" in top["text"]
    assert "Plan | 2023 | 2024 | 2025" in top["text"]
    # A group of rows alone in its passage is cited with its page and box.
    top = _search(owner, "What is the premium for plan K in 2025?").json()["data"]["items"][0]
    assert top["text"].startswith("Table 1, rows 11-13\nPlan | 2023 | 2024 | 2025\n")
    assert "Plan K | 40 | 50 | 70" in top["text"]
    assert top["page"] == 1
    x0, y0, x1, y1 = top["bbox"]
    assert 0 < x0 < x1 < 1 and 0 < y0 < y1 < 1


PERSIAN = [
    ["طرح", "حق بیمه ماهانه (یورو)", "کد"],
    ["طرح پایه کهربایی", "35", "PRE-1000"],
    ["طرح خانواده لاجوردی", "46", "PRE-1037"],
    ["طرح سالمندان ارغوانی", "57", "PRE-1074"],
]
ARABIC = [
    ["الخطة", "القسط الشهري (يورو)", "الرمز"],
    ["خطة أساسية الكهرماني", "35", "PRE-1000"],
    ["خطة عائلية اللازوردي", "46", "PRE-1037"],
    ["خطة كبار السن القرمزي", "57", "PRE-1074"],
]


def _printed_table(tmp_path: Any, language: str, rows: list[list[str]], before: str, after: str) -> bytes:
    """A right-to-left page with a bordered table, printed to PDF by Chromium
    (its text layer marks how its runs read: resources/parsing/pdf_bidi.py)."""
    from tests.resources.test_parsing_languages import _print_to_pdf

    cells = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    page = (
        f'<!DOCTYPE html><html lang="{language}" dir="rtl"><body style="font-family: DejaVu Sans">'
        f'<p>{before}</p><table style="border-collapse: collapse" border="1">{cells}</table>'
        f"<p>{after}</p></body></html>"
    )
    return _print_to_pdf(page.encode(), tmp_path)


@pytest.mark.parametrize(
    ("language", "rows", "before", "after"),
    [
        ("fa", PERSIAN, "حق بیمه طرح‌ها در سال ۲۰۲۵، به ازای هر ماه.", "پایان جدول."),
        ("ar", ARABIC, "أقساط الخطط لعام ٢٠٢٥ لكل شهر.", "نهاية الجدول."),
    ],
)
def test_a_right_to_left_page_s_table_reads_its_cells_in_reading_order(
    tmp_path: Any, language: str, rows: list[list[str]], before: str, after: str
) -> None:
    """Before, the page's text ran each row's cells together
    (``طرح پایه کهرباییPRE-100035``): pdfplumber lays a right-to-left
    page's characters out as they look, so its tables were not looked for."""
    document = _parse(_printed_table(tmp_path, language, rows, before, after))
    assert document.text.split("\n\n") == [
        before,
        "Table 1, rows 2-4\n" + "\n".join(" | ".join(row) for row in rows),
        after,
    ]
    start = document.text.index("Table 1")
    box = document.bbox_of(start, start + 10)
    assert box is not None and 0 < box[0] < box[2] < 1 and 0 < box[1] < box[3] < 0.5


def _pages(*pdfs: bytes) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for pdf in pdfs:
        writer.add_page(PdfReader(io.BytesIO(pdf)).pages[0])
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.mark.parametrize("repeated", [True, False])
def test_a_table_that_goes_on_over_the_page_keeps_its_header_and_numbers(repeated: bool) -> None:
    header, first, rest = PREMIUMS[0], PREMIUMS[1:4], PREMIUMS[4:]
    document = _parse(
        _pages(
            make_table_pdf([header, *first], before=BEFORE),
            make_table_pdf([header, *rest] if repeated else rest),
        )
    )
    assert document.text.split("\n\n")[1:] == [
        "Table 1, rows 2-4\nPlan | 2024 | 2025\nBasic plan | 40 | 45\nFamily plan | 47 | 54"
        "\nSenior plan | 54 | 63",
        "Table 1, rows 5-7\nPlan | 2024 | 2025\nTravel plan | 61 | 72\nStudent plan | 68 | 81"
        "\nDental plan | 75 | 90",
    ]
    second = document.text.index("Table 1, rows 5-7")
    assert document.page_at(second) == 2 and document.bbox_of(second, second + 10) is not None


def test_a_table_after_text_a_caption_or_other_columns_on_the_next_page_is_another_table() -> None:
    first = make_table_pdf(PREMIUMS[:3], before=BEFORE)
    after_text = _parse(_pages(first, make_table_pdf(PREMIUMS[3:], before="Older plans.")))
    captioned = _parse(_pages(first, make_table_pdf(PREMIUMS[3:], caption="Older plans")))
    narrower = _parse(_pages(first, make_table_pdf([row[:2] for row in PREMIUMS[3:]])))
    assert "Table 2, rows 2-4\nSenior plan | 54 | 63\n" in after_text.text
    assert "Older plans, rows 2-4\nSenior plan | 54 | 63\n" in captioned.text
    assert "Table 2, rows 2-4\nSenior plan | 54\nTravel plan | 61\n" in narrower.text
