"""What OCR reads on a page (:mod:`resources.parsing.ocr`): Tesseract's
words grouped into paragraphs, and the page's ruled tables
(:mod:`resources.parsing.ocr_tables`), in reading order, each with its box;
how they become a document's blocks, and how a page read in an earlier turn
is kept (``OcrPage.regions``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from resources.parsing.base import Box, DocumentBuilder, union_box
from resources.parsing.ocr_tables import Table
from resources.parsing.tables import add_page_table


@dataclass(frozen=True)
class Region:
    """A paragraph or a table the OCR read: its text (a table's rows as
    lines of cells), its box in page-relative coordinates 0 to 1 (``x0, y0,
    x1, y1``, origin top left), and for a table its rows."""

    text: str
    bbox: Box
    table: Table | None = None

    def stored(self) -> list[Any]:
        """As kept in ``OcrPage.regions``: ``[text, x0, y0, x1, y1]``, a
        table's rows, their boxes and its caption after them."""
        if self.table is None:
            return [self.text, *self.bbox]
        table = {"rows": self.table.rows, "boxes": self.table.row_boxes, "caption": self.table.caption}
        return [self.text, *self.bbox, table]

    @classmethod
    def from_stored(cls, stored: list[Any]) -> Region:
        text, x0, y0, x1, y1, *rest = stored
        box = (x0, y0, x1, y1)
        if not rest:
            return cls(text=text, bbox=box)
        kept = rest[0]
        boxes: list[Box] = [(x0, y0, x1, y1) for x0, y0, x1, y1 in kept["boxes"]]
        return cls(text=text, bbox=box, table=Table(box, kept["rows"], boxes, kept["caption"]))


def add_regions(builder: DocumentBuilder, regions: list[Region]) -> None:
    """A page's regions as blocks: paragraphs as they are, tables as groups
    of rows under their header, each group with the box around its rows."""
    for region in regions:
        if region.table is None:
            builder.add(region.text, bbox=region.bbox)
        else:
            table = region.table
            add_page_table(builder, table.caption, table.rows, table.row_boxes)


def regions_of(
    data: dict[str, list[Any]], *, width: int, height: int, tables: Sequence[Table] = ()
) -> list[Region]:
    """Tesseract's words (read on an image ``width`` x ``height``) grouped
    into paragraphs (lines joined by a newline) in the order Tesseract read
    them, each with the box around its words; a word in one of ``tables``
    (read apart) is left out."""
    paragraphs: dict[tuple[int, int, int], list[tuple[int, str, Box]]] = {}
    for i, word in enumerate(data["text"]):
        if not str(word).strip():
            continue
        x, y = int(data["left"][i]), int(data["top"][i])
        right, bottom = x + int(data["width"][i]), y + int(data["height"][i])
        box = (x / width, y / height, right / width, bottom / height)
        middle = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        if any(t.bbox[0] <= middle[0] <= t.bbox[2] and t.bbox[1] <= middle[1] <= t.bbox[3] for t in tables):
            continue
        key = (int(data["page_num"][i]), int(data["block_num"][i]), int(data["par_num"][i]))
        paragraphs.setdefault(key, []).append((int(data["line_num"][i]), str(word).strip(), box))
    return [_region(words) for words in paragraphs.values()]


def with_tables(paragraphs: list[Region], tables: list[Table]) -> list[Region]:
    """A page's paragraphs (in reading order) and its tables, each table
    before the first paragraph that starts below its top."""
    out = list(paragraphs)
    for table in sorted(tables, key=lambda table: table.bbox[1]):
        below = [n for n, region in enumerate(out) if region.table is None and region.bbox[1] > table.bbox[1]]
        out.insert(below[0] if below else len(out), table_region(table))
    return out


def table_region(table: Table) -> Region:
    """The region of a table read on a page."""
    return Region(text=_text(table), bbox=table.bbox, table=table)


def _text(table: Table) -> str:
    lines = [table.caption] if table.caption else []
    return "\n".join(lines + [" | ".join(row) for row in table.rows])


def _region(words: list[tuple[int, str, Box]]) -> Region:
    lines: dict[int, list[str]] = {}
    for line, word, _ in words:
        lines.setdefault(line, []).append(word)
    text = "\n".join(" ".join(line_words) for line_words in lines.values())
    return Region(text=text, bbox=union_box([box for _, _, box in words]))
