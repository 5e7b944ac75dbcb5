"""PDF: the text layer of each page, with its page number."""

from __future__ import annotations

import io
import logging
import re

from resources.parsing.base import DocumentBuilder, ParsedDocument, ParseError

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def parse_pdf(data: bytes) -> ParsedDocument:
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, PdfReadError

    # pypdf logs every recoverable oddity of a malformed file as a warning.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            # Many PDFs are "encrypted" with an empty user password (only
            # printing/copying restricted): those open without one.
            try:
                opened = reader.decrypt("")
            except (NotImplementedError, PdfReadError, FileNotDecryptedError) as exc:
                raise _encrypted() from exc
            if not opened:
                raise _encrypted()
        pages = list(reader.pages)
    except ParseError:
        raise
    except FileNotDecryptedError as exc:
        raise _encrypted() from exc
    except Exception as exc:  # pypdf raises many kinds on damaged files
        raise ParseError("corrupt_file", "The PDF is damaged and could not be read.") from exc
    builder = DocumentBuilder()
    for number, page in enumerate(pages, start=1):
        try:
            text = page.extract_text() or ""
        except ParseError:
            raise
        except Exception as exc:
            raise ParseError("corrupt_file", f"Page {number} of the PDF could not be read.") from exc
        builder.start_page(number)
        for paragraph in _PARAGRAPH_BREAK.split(text):
            builder.add(paragraph)
    try:
        return builder.build()
    except ParseError as exc:
        if exc.code == "empty_document":
            raise ParseError(
                "empty_document",
                "The PDF has no text layer (a scan or images only); run OCR on it first.",
            ) from exc
        raise


def _encrypted() -> ParseError:
    return ParseError("pdf_encrypted", "The PDF is password-protected. Upload it without a password.")
