"""DOCX: paragraphs and tables in body order; Heading/Title styles are headings;
a table of several rows in groups of rows under its header, as a CSV's.

The package is checked by :func:`archive_open` (declared sizes, ratio) before
python-docx opens it.
"""

from __future__ import annotations

import io
from typing import Any

from resources.parsing.archive import archive_open
from resources.parsing.base import PASS_THROUGH, DocumentBuilder, ParsedDocument, ParseError
from resources.parsing.detect import is_encrypted_ooxml
from resources.parsing.tables import add_table


def _add_table(builder: DocumentBuilder, number: int, rows: list[list[str]]) -> None:
    """A table of a header and rows: groups of rows under the header, as a
    CSV's (resources/parsing/tables.py); a table of one row: that row."""
    if sum(1 for row in rows if any(row)) > 1:
        add_table(builder, f"Table {number}", rows)
        return
    for cells in rows:
        # Merged cells repeat their text in each grid cell.
        unique = [c for i, c in enumerate(cells) if c and (i == 0 or c != cells[i - 1])]
        builder.add(" | ".join(unique))


def parse_docx(data: bytes) -> ParsedDocument:
    if is_encrypted_ooxml(data):
        raise ParseError(
            "docx_encrypted", "The DOCX file is password-protected. Upload it without a password."
        )
    import docx

    # The bounds first: python-docx would decompress whatever the package holds.
    # It reopens the same bytes with zipfile, which yields no more than the
    # declared sizes checked here.
    archive_open(data).close()
    try:
        document: Any = docx.Document(io.BytesIO(data))
        builder = DocumentBuilder()
        tables = 0
        for block in document.iter_inner_content():
            if hasattr(block, "rows"):
                tables += 1
                _add_table(builder, tables, [[cell.text.strip() for cell in row.cells] for row in block.rows])
            else:
                style = (getattr(block.style, "name", "") or "").lower()
                heading = style.startswith("heading") or style == "title"
                builder.add(block.text, heading=heading)
    except PASS_THROUGH:
        raise
    except Exception as exc:  # zipfile/lxml/python-docx errors on damaged files
        raise ParseError("corrupt_file", "The DOCX file is damaged and could not be read.") from exc
    return builder.build()
