"""CSV and XLSX (and the tables of DOCX, HTML and PDF): tables whose passages
answer by row (docs/ingestion.md, "Tables").

A table's first non-empty row is its header. The rows after it are cut into
groups of at most TABLE_ROWS_PER_PASSAGE rows (fewer when their text would
pass what a passage holds, two characters per token of
CHUNK_SIZE_TOKENS), and each group is one block that names its table and
rows and repeats the header::

    Prices, rows 2-11
    Product | Price | Stock
    Juicer J6 | 129 | 14
    …

Each block starts as a heading, so the chunker never runs a passage across
two groups' start and a passage holds whole groups. Bounded: at most
TABLE_MAX_ROWS rows and TABLE_MAX_COLUMNS columns in a table
(``file_too_complex``); a cell's text is cut at TABLE_MAX_CELL_CHARS.
"""

from __future__ import annotations

import csv
import datetime
import io
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from django.conf import settings

from resources.parsing.archive import archive_open
from resources.parsing.base import (
    PASS_THROUGH,
    Box,
    DocumentBuilder,
    ParsedDocument,
    ParseError,
    check_deadline,
    union_box,
)
from resources.parsing.detect import decode_text

Row = list[str]
# Characters of a table's text per token of the embedding model's, counted
# low (digits and short cells cut into many word pieces), so that a group of
# rows fits one passage of CHUNK_SIZE_TOKENS.
CHARS_PER_TOKEN = 2


def parse_csv(data: bytes) -> ParsedDocument:
    text = decode_text(data)
    if text is None:
        raise ParseError("corrupt_file", "The CSV file is not UTF-8 (or UTF-16 with a BOM) text.")
    try:
        dialect: Any = csv.Sniffer().sniff(text[:4096], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    builder = DocumentBuilder()
    try:
        add_table(builder, "Table", csv.reader(io.StringIO(text), dialect))
    except csv.Error as exc:
        raise ParseError("corrupt_file", f"The CSV file could not be read ({exc}).") from exc
    return builder.build()


def parse_xlsx(data: bytes) -> ParsedDocument:
    """Every worksheet a table, named by its sheet (formulas as the values Excel last saved)."""
    import openpyxl

    archive_open(data).close()  # the zip bounds before openpyxl decompresses anything
    builder = DocumentBuilder()
    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        try:
            for sheet in workbook.worksheets:
                rows = sheet.iter_rows(values_only=True, max_col=settings.TABLE_MAX_COLUMNS + 1)
                add_table(builder, str(sheet.title), rows)
        finally:
            workbook.close()
    except PASS_THROUGH:
        raise
    except Exception as exc:  # zipfile/lxml/openpyxl errors on damaged files
        raise ParseError("corrupt_file", "The XLSX file is damaged and could not be read.") from exc
    return builder.build()


def add_page_table(
    builder: DocumentBuilder, caption: str, rows: list[list[str]], boxes: Sequence[Box]
) -> None:
    """A table found on a page (PDF, OCR), named by its caption or its
    number; one that starts its page right after a table that ended the
    page before, with as many columns and no caption of its own, continues
    that table: under its header (dropped where the page repeats it), its
    rows numbered on."""
    held = builder.open_table if builder.at_page_start() and not caption and rows else None
    if held is None or len(rows[0]) != len(held[1]):
        add_table(builder, builder.table_name(caption), rows, boxes=boxes)
        return
    name, header, last = held
    if [_cell(cell) for cell in rows[0]] == header:
        rows, boxes = rows[1:], boxes[1:]
    add_table(builder, name, [header, *rows], boxes=[*boxes[:1], *boxes], shift=last - 1)


def add_table(
    builder: DocumentBuilder,
    name: str,
    rows: Iterable[Iterable[Any]],
    *,
    boxes: Sequence[Box] = (),
    shift: int = 0,
) -> None:
    """The rows of one table as blocks of ``builder``: groups under the
    header, each with the box around its rows where ``boxes`` (row by row,
    empty ones too) has them; ``shift``: added to the rows' numbers (a table
    continued from the page before)."""
    numbered = _rows(rows)
    first = next(numbered, None)
    if first is None:
        return
    header = first[1]
    width = len(header)
    group: list[tuple[int, Row]] = []
    last = first[0] + shift
    for number, row in numbered:
        cells = (row + [""] * width)[: max(width, len(row))]
        if group and (len(group) >= settings.TABLE_ROWS_PER_PASSAGE or _too_long(header, group, cells)):
            builder.add(_block(name, header, group, shift), heading=True, bbox=_around(boxes, group))
            group = []
        group.append((number, cells))
        last = number + shift
    if group:
        builder.add(_block(name, header, group, shift), heading=True, bbox=_around(boxes, group))
    elif not shift:
        builder.add(f"{name}\n{' | '.join(header)}", heading=True, bbox=_around(boxes, [first]))
    builder.open_table = (name, header, last)


def right_to_left(rows: list[list[str]]) -> bool:
    """Whether most letters of a table's cells are of a right-to-left script
    (its first column is then on the right)."""
    kinds = [unicodedata.bidirectional(char) for row in rows for cell in row for char in cell]
    return sum(kind in ("R", "AL") for kind in kinds) > kinds.count("L")


def is_table(rows: list[list[str]]) -> bool:
    """Two rows with text, and two columns: not a framed paragraph."""
    filled = [row for row in rows if any(cell.strip() for cell in row)]
    return len(filled) >= 2 and max(sum(1 for cell in row if cell.strip()) for row in filled) >= 2


def _around(boxes: Sequence[Box], group: list[tuple[int, Row]]) -> Box | None:
    if len(boxes) < group[-1][0]:
        return None
    return union_box([boxes[number - 1] for number, _ in group])


def _too_long(header: Row, group: list[tuple[int, Row]], row: Row) -> bool:
    budget = settings.CHUNK_SIZE_TOKENS * CHARS_PER_TOKEN
    length = sum(len(cell) + 3 for cell in header) + sum(len(cell) + 3 for _, r in group for cell in r)
    return length + sum(len(cell) + 3 for cell in row) > budget


def _block(name: str, header: Row, group: list[tuple[int, Row]], shift: int = 0) -> str:
    first, last = group[0][0] + shift, group[-1][0] + shift
    where = f"row {first}" if first == last else f"rows {first}-{last}"
    lines = [f"{name}, {where}", " | ".join(header)]
    lines.extend(" | ".join(cells) for _, cells in group)
    return "\n".join(lines)


def _rows(rows: Iterable[Iterable[Any]]) -> Iterator[tuple[int, Row]]:
    """The non-empty rows with their 1-based numbers, cells as text without
    trailing empty ones; bounded by TABLE_MAX_ROWS and TABLE_MAX_COLUMNS."""
    seen = 0
    for number, row in enumerate(rows, start=1):
        check_deadline()
        cells = [_cell(value) for value in row]
        while cells and not cells[-1]:
            cells.pop()
        if not cells:
            continue
        seen += 1
        if seen > settings.TABLE_MAX_ROWS:
            raise _too_complex(f"more than {settings.TABLE_MAX_ROWS:,} rows (TABLE_MAX_ROWS)")
        if len(cells) > settings.TABLE_MAX_COLUMNS:
            raise _too_complex(f"more than {settings.TABLE_MAX_COLUMNS:,} columns (TABLE_MAX_COLUMNS)")
        yield number, cells


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, datetime.datetime) and value.time() == datetime.time():
        value = value.date()
    if isinstance(value, datetime.date | datetime.time):
        value = value.isoformat()
    text = " ".join(str(value).split()).replace("|", "/")
    limit = settings.TABLE_MAX_CELL_CHARS
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _too_complex(what: str) -> ParseError:
    return ParseError("file_too_complex", f"The table has {what}. Split it into smaller documents.")
