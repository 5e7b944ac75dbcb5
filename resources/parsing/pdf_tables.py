"""A PDF page's ruled tables as groups of rows under their header, as a
CSV's (docs/ingestion.md, "Tables").

pdfplumber's table finder, lines strategy: cells drawn by ruled lines and
rectangles. On a right-to-left page (Persian, Arabic) the cells' text and
the text around the tables come from the pieces the page shows, put in
reading order as the page's other lines are (resources/parsing/pdf_bidi.py;
pdfplumber lays characters out left to right as they look), and a table
whose letters are mostly right to left has its first column on the right.
Tables without rules are not looked for (aligning text into columns finds
tables in ordinary paragraphs). A page whose content stream
draws too few lines for a table is not looked at, so a page of text costs
nothing more; one with too many operators, lines or crossings of lines for a
bounded look (pdfplumber is not interrupted by the parse deadline, only
checked between its steps) keeps its text as it is. On a
page with a table, the text around it is pdfplumber's, each run of text
placed before the first table below it; each group of rows keeps its page
and its box. A PDF pdfplumber cannot read keeps pypdf's text.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from resources.parsing.base import PASS_THROUGH, Box, DocumentBuilder, check_deadline
from resources.parsing.pdf_bidi import fold_presentation_forms, logical_text
from resources.parsing.pdf_glyphs import Piece
from resources.parsing.tables import add_page_table, is_table, right_to_left

# A page is looked at when its content stream draws at least this many
# lines and rectangles (the fewest a ruled table of two rows and two columns
# takes: a frame and two inner lines)...
MIN_RULES = 3
# ... and at most these many, and these many operators in all: pdfplumber
# reads the page again, uninterrupted (about 2 s for 50,000 operators).
MAX_RULES = 2_000
MAX_OPERATORS = 30_000
# Where rules cross: cells are built from them in quadratic time (4,000: half
# a second; 28,000: 19 s). A table of 200 rows and 10 columns has 2,211.
MAX_CROSSINGS = 4_000
_RULES = frozenset({b"re", b"l", "re", "l"})
_SETTINGS = {"vertical_strategy": "lines", "horizontal_strategy": "lines"}


@dataclass
class Rules:
    """Counts a page's operators and rules as pypdf walks its content stream
    (``visitor_operand_before``), checking the parse deadline at each."""

    operators: int = 0
    rules: int = 0

    def __call__(self, operator: Any, operands: Any, cm: Any, tm: Any) -> None:
        # A single page can hold millions of operators.
        check_deadline()
        self.operators += 1
        if operator in _RULES:
            self.rules += 1

    def worth_a_look(self) -> bool:
        return MIN_RULES <= self.rules <= MAX_RULES and self.operators <= MAX_OPERATORS


@dataclass(frozen=True)
class PageTable:
    """A table found on a page: its rows of cells, each row's box, and its
    caption (a first row of one cell across the table), if any."""

    rows: list[list[str]]
    boxes: list[Box]
    caption: str = ""


@dataclass
class PdfTables:
    """The tables of one PDF's pages, read with pdfplumber when a page may
    hold one (opened once, at the first such page)."""

    data: bytes
    pages: int
    _pdf: Any = None
    _unreadable: bool = False
    _pages: list[Any] = field(default_factory=list)

    def page_parts(
        self, number: int, rules: Rules, pieces: list[Piece] | None = None
    ) -> list[str | PageTable] | None:
        """Page ``number``'s text runs and tables in reading order, or
        ``None`` (no table found, not looked at, or unreadable). ``pieces``:
        the page's shown text (a right-to-left page's), read into cells and
        runs in reading order (resources/parsing/pdf_bidi.py) rather than
        as pdfplumber lays its characters out."""
        if not rules.worth_a_look() or self._unreadable:
            return None
        try:
            if self._pdf is None:
                import pdfplumber

                self._pdf = pdfplumber.open(io.BytesIO(self.data))
                self._pages = list(self._pdf.pages)
            if len(self._pages) != self.pages:  # pdfminer walks the page tree otherwise than pypdf
                self._unreadable = True
                return None
            return _page_parts(self._pages[number - 1], pieces)
        except PASS_THROUGH:
            raise
        except Exception:  # pdfminer's many errors on what pypdf read: pypdf's text stands
            self._unreadable = True
            return None

    def add(self, builder: DocumentBuilder, parts: list[str | PageTable], paragraphs: Any) -> None:
        """``parts`` as blocks: text split by ``paragraphs`` (a pattern),
        tables as groups of rows named by their caption, else ``Table 1``,
        ``Table 2``, … in the PDF."""
        for part in parts:
            if isinstance(part, str):
                for paragraph in paragraphs.split(part):
                    builder.add(paragraph)
                continue
            add_page_table(builder, part.caption, part.rows, part.boxes)

    def close(self) -> None:
        if self._pdf is not None:
            self._pdf.close()


def _page_parts(page: Any, pieces: list[Piece] | None = None) -> list[str | PageTable] | None:
    from pdfplumber.utils.text import extract_text

    found = []
    for table in _find_tables(page):
        check_deadline()
        cells = table.extract() if pieces is None else _cells_in_reading_order(page, table, pieces)
        rows = [[cell or "" for cell in row] for row in cells]
        boxes = [_box(page, row.bbox) for row in table.rows]
        caption = ""
        if len(rows) > 2 and cells[0][0] and all(cell is None for cell in cells[0][1:]):
            caption, rows, boxes = " ".join(rows[0][0].split()).replace("|", "/"), rows[1:], boxes[1:]
        if is_table(rows):
            found.append((table.bbox, PageTable(rows, boxes, caption[: settings.TABLE_MAX_CELL_CHARS])))
    if not found:
        return None
    found.sort(key=lambda item: item[0][1])
    if pieces is None:
        runs = _around(found, page.chars, lambda c: ((c["x0"] + c["x1"]) / 2, (c["top"] + c["bottom"]) / 2))
        texts = [extract_text(run) for run in runs]
    else:
        runs = _around(found, pieces, lambda piece: _where(page, piece))
        texts = [fold_presentation_forms(logical_text(run)) for run in runs]
    parts: list[str | PageTable] = [texts[0]]
    for (_, table), text in zip(found, texts[1:], strict=True):
        parts += [table, text]
    return parts


def _around(found: list[tuple[Any, PageTable]], items: Any, where: Any) -> list[list[Any]]:
    """The page's characters or pieces outside the tables (``where``: the
    point of one, from the top) in runs: before the first table, then after
    each (a run goes before the first table below it)."""
    runs: list[list[Any]] = [[] for _ in range(len(found) + 1)]
    for item in items:
        x, y = where(item)
        if any(b[0] <= x <= b[2] and b[1] <= y <= b[3] for b, _ in found):
            continue
        runs[sum(1 for b, _ in found if b[1] < y)].append(item)
    return runs


def _where(page: Any, piece: Piece) -> tuple[float, float]:
    """Where a piece's text object starts, in pdfplumber's coordinates (from
    the top), a third of the font's height above its baseline (inside its cell)."""
    return piece.x + 0.5, float(page.mediabox[3]) - piece.y - piece.size / 3


def _cells_in_reading_order(page: Any, table: Any, pieces: list[Piece]) -> list[list[str | None]]:
    """A table's cells from the pieces shown in them, in reading order (a
    row's columns right to left when most of its letters are right to left)."""
    placed = [(_where(page, piece), piece) for piece in pieces]
    rows: list[list[str | None]] = []
    for row in table.rows:
        cells: list[str | None] = []
        for bbox in row.cells:
            if bbox is None:
                cells.append(None)
                continue
            inside = [p for (x, y), p in placed if bbox[0] <= x <= bbox[2] and bbox[1] <= y <= bbox[3]]
            cells.append(" ".join(fold_presentation_forms(logical_text(inside)).split()))
        rows.append(cells)
    if right_to_left([[cell or "" for cell in row] for row in rows]):
        rows = [row[::-1] for row in rows]
    return rows


def _find_tables(page: Any) -> list[Any]:
    """pdfplumber's ``page.find_tables``, step by step: none where the rules
    cross more than MAX_CROSSINGS times."""
    from pdfplumber.table import (
        Table,
        TableFinder,
        TableSettings,
        cells_to_tables,
        edges_to_intersections,
        intersections_to_cells,
    )

    finder = TableFinder.__new__(TableFinder)  # its constructor runs every step unbounded
    finder.page, finder.settings = page, TableSettings.resolve(_SETTINGS)
    settings = finder.settings
    edges = finder.get_edges()
    check_deadline()
    crossings = edges_to_intersections(
        edges, settings.intersection_x_tolerance, settings.intersection_y_tolerance
    )
    if len(crossings) > MAX_CROSSINGS:
        return []
    check_deadline()
    return [Table(page, cells) for cells in cells_to_tables(intersections_to_cells(crossings))]


def _box(page: Any, bbox: tuple[float, float, float, float]) -> Box:
    """pdfplumber's ``(x0, top, x1, bottom)`` in points as page-relative 0 to 1."""
    left, top, right, bottom = page.bbox
    width, height = (right - left) or 1, (bottom - top) or 1

    def clamp(value: float) -> float:
        return round(min(max(value, 0.0), 1.0), 4)

    return (
        clamp((bbox[0] - left) / width),
        clamp((bbox[1] - top) / height),
        clamp((bbox[2] - left) / width),
        clamp((bbox[3] - top) / height),
    )
