"""CSV and XLSX tables become passages that answer by row, each group of rows
under its header (docs/ingestion.md, "Tables")."""

from __future__ import annotations

import datetime
import io
from typing import Any

import pytest
from pytest_django import Settings

from daneshyar.exceptions import UnsupportedMediaType
from resources.chunking import chunk_document
from resources.parsing import ParsedDocument, ParseError, detect_content_type, parse_document
from resources.parsing.detect import CSV, XLSX

HEADER = ["Product", "Price", "Stock"]
ROWS = [[f"Juicer J{n}", str(100 + n), str(n * 3)] for n in range(1, 26)]


def _csv(rows: list[list[str]], delimiter: str = ",") -> bytes:
    return "\n".join(delimiter.join(row) for row in rows).encode()


def _xlsx(sheets: dict[str, list[list[Any]]]) -> bytes:
    import openpyxl

    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(row)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def _parse(data: bytes, filename: str = "") -> ParsedDocument:
    return parse_document(data, content_type=detect_content_type(data, filename=filename))


def test_csv_and_xlsx_are_detected() -> None:
    assert detect_content_type(_csv([HEADER]), filename="prices.csv") == CSV
    assert detect_content_type(_csv([HEADER]), claimed_type="text/csv") == CSV
    assert detect_content_type(_xlsx({"Prices": [HEADER]})) == XLSX
    assert detect_content_type(_xlsx({"Prices": [HEADER]}), filename="prices.bin") == XLSX


def test_the_415_lists_the_table_and_image_types() -> None:
    with pytest.raises(UnsupportedMediaType) as info:
        detect_content_type(b"GIF89a\x00\x01binary\x00")
    message = str(info.value)
    for name in (
        "XLSX (application/vnd.openxmlformats-officedocument.spreadsheetml.sheet)",
        "CSV (text/csv)",
    ):
        assert name in message
    for name in ("PNG (image/png)", "JPEG (image/jpeg)", "TIFF (image/tiff)"):
        assert name in message


def test_each_group_of_rows_keeps_the_header_and_names_its_rows(settings: Settings) -> None:
    settings.TABLE_ROWS_PER_PASSAGE = 10
    document = _parse(_csv([HEADER, *ROWS]), filename="prices.csv")
    blocks = document.text.split("\n\n")
    assert len(blocks) == 3
    assert blocks[0].split("\n")[:3] == ["Table, rows 2-11", "Product | Price | Stock", "Juicer J1 | 101 | 3"]
    assert blocks[2].split("\n")[:2] == ["Table, rows 22-26", "Product | Price | Stock"]
    assert blocks[2].endswith("Juicer J25 | 125 | 75")
    # Each group starts as a heading, so a passage never starts inside one.
    assert document.headings == {document.text.index(block) for block in blocks}


def test_a_passage_of_a_table_holds_its_header_with_the_row(settings: Settings) -> None:
    settings.CHUNK_SIZE_TOKENS = 60
    document = _parse(_csv([HEADER, *ROWS]), filename="prices.csv")
    chunks = chunk_document(document, tokenizer=None, size=60, overlap=10)
    for chunk in chunks:
        assert "Product | Price | Stock" in chunk.text
    assert [c for c in chunks if "Juicer J17 |" in c.text]


def test_xlsx_sheets_are_tables_named_by_their_sheet() -> None:
    data = _xlsx(
        {
            "Prices": [HEADER, ["Juicer J6", 129.0, 14], [None, None, None], ["Blender B2", 89.5, 3]],
            "Dates": [["Event", "When"], ["Launch", datetime.datetime(2024, 5, 1)]],
        }
    )
    document = _parse(data)
    assert document.text == (
        "Prices, rows 2-4\nProduct | Price | Stock\nJuicer J6 | 129 | 14\nBlender B2 | 89.5 | 3"
        "\n\nDates, row 2\nEvent | When\nLaunch | 2024-05-01"
    )


def test_a_semicolon_csv_with_quotes_reads_its_cells() -> None:
    data = b'Name;Note\n"Ali";"likes tea; not coffee"\n'
    assert _parse(data, filename="a.csv").text == "Table, row 2\nName | Note\nAli | likes tea; not coffee"


def test_long_cells_are_cut(settings: Settings) -> None:
    settings.TABLE_MAX_CELL_CHARS = 20
    document = _parse(_csv([["Name", "Note"], ["Ali", "x" * 100]]), filename="a.csv")
    assert document.text.endswith("Ali | " + "x" * 19 + "…")


@pytest.mark.parametrize(
    ("setting", "rows", "what"),
    [
        ("TABLE_MAX_ROWS", [HEADER, *ROWS], "TABLE_MAX_ROWS"),
        ("TABLE_MAX_COLUMNS", [["a"] * 12], "TABLE_MAX_COLUMNS"),
    ],
)
def test_tables_over_their_bounds_are_too_complex(
    settings: Settings, setting: str, rows: list[list[str]], what: str
) -> None:
    setattr(settings, setting, 10)
    with pytest.raises(ParseError) as info:
        _parse(_csv(rows), filename="big.csv")
    assert info.value.code == "file_too_complex"
    assert what in info.value.message


def test_a_damaged_xlsx_is_corrupt() -> None:
    with pytest.raises(ParseError) as info:
        _parse(_xlsx({"Prices": [HEADER]})[:300], filename="prices.xlsx")
    assert info.value.code == "corrupt_file"


def test_a_docx_table_of_several_rows_keeps_its_header_with_each_group(settings: Settings) -> None:
    from tests.resources.files import make_docx

    settings.TABLE_ROWS_PER_PASSAGE = 2
    data = make_docx(
        [("p", "Prices below.")],
        [HEADER, ["Juicer J6", "129", "14"], ["Blender B2", "89", "3"], ["Kettle", "20", "1"]],
    )
    document = _parse(data)
    assert document.text == (
        "Prices below."
        "\n\nTable 1, rows 2-3\nProduct | Price | Stock\nJuicer J6 | 129 | 14\nBlender B2 | 89 | 3"
        "\n\nTable 1, row 4\nProduct | Price | Stock\nKettle | 20 | 1"
    )


def test_an_html_table_keeps_its_header_with_each_group(settings: Settings) -> None:
    settings.TABLE_ROWS_PER_PASSAGE = 2
    page = (
        b"<h1>Prices</h1><table><caption>Kitchen</caption><tr><th>Product</th><th>Price</th></tr>"
        b"<tr><td>Juicer</td><td>129</td></tr><tr><td>Kettle</td><td>20</td></tr>"
        b"<tr><td>Mixer</td><td>45</td></tr></table><p>Prices include tax.</p>"
    )
    assert _parse(page).text == (
        "Prices\n\nKitchen, rows 2-3\nProduct | Price\nJuicer | 129\nKettle | 20"
        "\n\nKitchen, row 4\nProduct | Price\nMixer | 45\n\nPrices include tax."
    )
