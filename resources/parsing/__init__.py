"""Turn uploaded bytes into plain text, one module per format.

Its modules:

- ``archive.py``: bounded opening of zip packages (DOCX)
- ``base.py``: what every parser produces, and the errors that end an ingestion
- ``detect.py``: an upload's format, from its bytes
- ``html.py``: HTML's visible text by block
- ``image.py``: PNG, JPEG and TIFF, read by OCR
- ``ocr.py``: Tesseract: paragraphs and tables of a page image, their boxes, the OCR budgets
- ``ocr_clean.py``: a page image's noise and light: a photo's paper, a fax's specks, speckled cells
- ``ocr_scale.py``: a page image's lines of ink: the scale OCR reads at, the share a reading covered
- ``ocr_regions.py``: what OCR reads on a page as regions: paragraphs and tables, kept between turns
- ``ocr_tables.py``: a page image's ruled tables: their cells found, cut into strips, read into rows
- ``ocr_turn.py``: OCR in turns: what one attempt reads, a table or a page's text a step, and how it ends
- ``pdf.py``: PDF's text layer, page by page
- ``pdf_bidi.py``: a right-to-left PDF page's text in reading order
- ``pdf_glyphs.py``: a PDF page's shown text as positioned pieces
- ``pdf_tables.py``: a PDF page's ruled tables as groups of rows under their header
- ``plain.py``: plain text and Markdown
- ``tables.py``: CSV and XLSX: rows in groups, each under its header
- ``word.py``: DOCX: paragraphs and tables in body order
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings

from resources.parsing import detect
from resources.parsing.base import ParsedDocument, ParseError, parse_deadline
from resources.parsing.detect import ACCEPTED_MESSAGE, ACCEPTED_TYPES, detect_content_type
from resources.parsing.html import parse_html
from resources.parsing.image import parse_image
from resources.parsing.ocr import ocr_budget
from resources.parsing.ocr_turn import Turn, TurnOver
from resources.parsing.pdf import parse_pdf
from resources.parsing.plain import parse_markdown, parse_plain_text
from resources.parsing.tables import parse_csv, parse_xlsx
from resources.parsing.word import parse_docx

__all__ = [
    "ACCEPTED_MESSAGE",
    "ACCEPTED_TYPES",
    "ParseError",
    "ParsedDocument",
    "Turn",
    "TurnOver",
    "detect_content_type",
    "parse_document",
]

_PARSERS: dict[str, Callable[[bytes], ParsedDocument]] = {
    detect.PLAIN_TEXT: parse_plain_text,
    detect.MARKDOWN: parse_markdown,
    detect.HTML: parse_html,
    detect.PDF: parse_pdf,
    detect.DOCX: parse_docx,
    detect.XLSX: parse_xlsx,
    detect.CSV: parse_csv,
    detect.PNG: parse_image,
    detect.JPEG: parse_image,
    detect.TIFF: parse_image,
}


def parse_document(
    data: bytes,
    *,
    content_type: str,
    timeout: float | None = None,
    language: str | None = None,
    turn: Turn | None = None,
) -> ParsedDocument:
    """Extract the text of ``data`` (of a type :func:`detect_content_type` returned).

    Images and PDF pages without a text layer are read by OCR in
    ``language`` (BCP 47; ``None``: OCR_LANGUAGES), docs/ocr.md; with
    ``turn``, a few pages at a time (:class:`TurnOver` when the turn has read
    its pages and more are left).

    Bounded (docs/ingestion.md, "Bounds"): over a bound it raises
    :class:`ParseError` with ``file_too_large_uncompressed``,
    ``file_too_complex`` or ``ingest_timeout`` (after ``timeout`` seconds,
    INGEST_PARSE_TIMEOUT_SECONDS by default).
    """
    parser = _PARSERS.get(content_type)
    if parser is None:
        raise ParseError("unsupported_media_type", f"{content_type} is not accepted. {ACCEPTED_MESSAGE}")
    seconds = settings.INGEST_PARSE_TIMEOUT_SECONDS if timeout is None else timeout
    with parse_deadline(seconds), ocr_budget(language=language, turn=turn):
        return parser(data)
