"""PDF: the text layer of each page, with its page number.

A page with right-to-left text (Arabic, Persian, Hebrew) is read again by
:mod:`resources.parsing.pdf_glyphs` and put in reading order by
:mod:`resources.parsing.pdf_bidi` when its producer marks how its runs
read (``/ReversedChars``, ``/ActualText``); other pages keep pypdf's text.
A page without a text layer (a scan) is read by OCR from its largest image
(:mod:`resources.parsing.ocr`), each paragraph and ruled table with its box. A page that
draws ruled tables has them read as groups of rows under their header
(:mod:`resources.parsing.pdf_tables`; on a right-to-left page, their cells
from the pieces read in reading order).

Bounded: at most INGEST_PDF_MAX_PAGES pages and INGEST_PDF_MAX_OBJECTS
indirect objects (``file_too_complex``), pypdf's own limits (decompressed
stream sizes: ``file_too_large_uncompressed``; depths, cycles and table
sizes: ``file_too_complex``), and the parse
deadline checked between pages and content-stream operators
(``ingest_timeout``).
"""

from __future__ import annotations

import io
import logging
import re
from typing import Any

from django.conf import settings

from resources.parsing.base import PASS_THROUGH, DocumentBuilder, ParsedDocument, ParseError, check_deadline
from resources.parsing.ocr import ocr_kept, ocr_page, ocr_pages_total
from resources.parsing.ocr_regions import Region, add_regions
from resources.parsing.pdf_bidi import fold_presentation_forms, logical_text
from resources.parsing.pdf_glyphs import Piece, page_pieces
from resources.parsing.pdf_tables import PdfTables, Rules

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
# Letters of the right-to-left scripts (Hebrew, Arabic, Syriac, Thaana, N'Ko,
# Samaritan, Mandaic) and their presentation forms.
_RIGHT_TO_LEFT = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]")


def parse_pdf(data: bytes) -> ParsedDocument:
    builder = DocumentBuilder()
    pages = _open_pages(data)
    ocr_pages_total(len(pages))
    tables = PdfTables(data, len(pages))
    try:
        for number, page in enumerate(pages, start=1):
            check_deadline()
            rules = Rules()
            text, pieces = _page_text(number, page, rules)
            builder.start_page(number)
            if not text.strip():
                add_regions(builder, _scanned_page(number, page))
            right_to_left = _RIGHT_TO_LEFT.search(text) is not None
            parts = None if right_to_left and pieces is None else tables.page_parts(number, rules, pieces)
            tables.add(builder, parts or [text], _PARAGRAPH_BREAK)
    finally:
        tables.close()
    try:
        return builder.build()
    except ParseError as exc:
        if exc.code == "empty_document":
            raise ParseError(
                "empty_document",
                "The PDF has no text layer, and OCR recognised no text on its pages.",
            ) from exc
        raise


def _open_pages(data: bytes) -> list[Any]:
    """The pages of a readable PDF within the limits, decrypted when an empty
    password opens it."""
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, LimitReachedError

    # pypdf logs every recoverable oddity of a malformed file as a warning.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(data))
        _check_objects(reader)
        if reader.is_encrypted:
            _decrypt(reader)
        _check_pages(reader)
        return list(reader.pages)
    except PASS_THROUGH:
        raise
    except FileNotDecryptedError as exc:
        raise _encrypted() from exc
    except LimitReachedError as exc:
        raise _over_limit(exc) from exc
    except Exception as exc:  # pypdf raises many kinds on damaged files
        raise ParseError("corrupt_file", "The PDF is damaged and could not be read.") from exc


def _decrypt(reader: Any) -> None:
    """Many PDFs are "encrypted" with an empty user password (only
    printing/copying restricted): those open without one."""
    from pypdf.errors import FileNotDecryptedError, PdfReadError

    try:
        opened = reader.decrypt("")
    except (NotImplementedError, PdfReadError, FileNotDecryptedError) as exc:
        raise _encrypted() from exc
    if not opened:
        raise _encrypted()


def _check_pages(reader: Any) -> None:
    count = len(reader.pages)
    if count > settings.INGEST_PDF_MAX_PAGES:
        raise ParseError(
            "file_too_complex",
            f"The PDF has {count:,} pages; the limit is {settings.INGEST_PDF_MAX_PAGES:,} "
            "(INGEST_PDF_MAX_PAGES). Split it into smaller documents.",
        )


def _page_text(number: int, page: Any, rules: Rules) -> tuple[str, list[Piece] | None]:
    """The page's text; for a right-to-left page read in reading order, the
    pieces shown too (its tables' cells are read from them)."""
    from pypdf.errors import LimitReachedError

    try:
        text: str = page.extract_text(visitor_operand_before=rules) or ""
    except PASS_THROUGH:
        raise
    except LimitReachedError as exc:
        raise _over_limit(exc) from exc
    except Exception as exc:
        raise ParseError("corrupt_file", f"Page {number} of the PDF could not be read.") from exc
    if not _RIGHT_TO_LEFT.search(text):
        return text, None
    pieces = _marked_pieces(page)
    if pieces is None:
        return fold_presentation_forms(text), None
    return fold_presentation_forms(logical_text(pieces)), pieces


def _scanned_page(number: int, page: Any) -> list[Region]:
    """OCR of the page's largest image (a scan fills its page: its boxes
    stand for the page's); no image, no text. Read in an earlier turn: as kept."""
    from pypdf.errors import LimitReachedError

    kept = ocr_kept(number)
    if kept is not None:
        return kept

    try:
        images = [image.image for image in page.images]
    except PASS_THROUGH:
        raise
    except LimitReachedError as exc:
        raise _over_limit(exc) from exc
    except Exception as exc:
        raise ParseError(
            "corrupt_file", f"The images of page {number} of the PDF could not be read."
        ) from exc
    images = [image for image in images if image is not None]
    if not images:
        return []
    largest = max(images, key=lambda image: image.size[0] * image.size[1])
    return ocr_page(largest.convert("L"), page=number)


def _marked_pieces(page: Any) -> list[Piece] | None:
    """The page's shown text pieces, or ``None`` where its producer did not
    mark how its right-to-left runs read (or in a way not decoded here):
    then pypdf's text stands."""
    try:
        pieces = page_pieces(page)
    except PASS_THROUGH:
        raise
    except Exception:  # Unreadable, or a malformed stream pypdf's extraction got past
        return None
    if not any(piece.reversed for piece in pieces):
        return None
    return pieces


def _check_objects(reader: Any) -> None:
    """``file_too_complex`` when the cross-reference tables list too many objects."""
    count = sum(len(objects) for objects in reader.xref.values()) + len(reader.xref_objStm)
    if count > settings.INGEST_PDF_MAX_OBJECTS:
        raise ParseError(
            "file_too_complex",
            f"The PDF has {count:,} objects; the limit is {settings.INGEST_PDF_MAX_OBJECTS:,} "
            "(INGEST_PDF_MAX_OBJECTS).",
        )


_EXPANDS = ("decompress", "declared", "memory limit")


def _over_limit(exc: Exception) -> ParseError:
    """pypdf's own bounds (decompressed sizes, depths, cycles, table sizes)."""
    reason = str(exc)
    if any(word in reason.lower() for word in _EXPANDS):
        return ParseError(
            "file_too_large_uncompressed",
            f"A stream of the PDF expands past the decompression limit ({reason}).",
        )
    return ParseError("file_too_complex", f"The PDF is over a structural limit of the parser ({reason}).")


def _encrypted() -> ParseError:
    return ParseError("pdf_encrypted", "The PDF is password-protected. Upload it without a password.")
