"""Recognise an upload's format from its bytes.

The client's filename and claimed type only decide between plain text and
Markdown (the bytes cannot tell them apart); everything else is sniffed:
``%PDF-`` for PDF, a ZIP with ``word/document.xml`` for DOCX (``xl/workbook.xml``
for XLSX), the PNG, JPEG and TIFF signatures, the WHATWG HTML signatures
for HTML, and valid UTF-8 (or UTF-16 with a BOM) for text (CSV by its name
or claimed type).
"""

from __future__ import annotations

import io
import re
import zipfile

from daneshyar.exceptions import UnsupportedMediaType

PLAIN_TEXT = "text/plain"
MARKDOWN = "text/markdown"
HTML = "text/html"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
CSV = "text/csv"
PNG = "image/png"
JPEG = "image/jpeg"
TIFF = "image/tiff"
IMAGES = (PNG, JPEG, TIFF)

ACCEPTED_TYPES: dict[str, str] = {
    PLAIN_TEXT: "plain text",
    MARKDOWN: "Markdown",
    HTML: "HTML",
    PDF: "PDF",
    DOCX: "DOCX",
    XLSX: "XLSX",
    CSV: "CSV",
    PNG: "PNG",
    JPEG: "JPEG",
    TIFF: "TIFF",
}
ACCEPTED_MESSAGE = "Accepted types: " + ", ".join(f"{name} ({mime})" for mime, name in ACCEPTED_TYPES.items())

_MARKDOWN_EXTENSIONS = (".md", ".markdown", ".mdown", ".mkd")
_MARKDOWN_CLAIMS = ("text/markdown", "text/x-markdown")
_DOCX_EXTENSIONS = (".docx",)
_XLSX_EXTENSIONS = (".xlsx",)
_CSV_CLAIMS = ("text/csv", "application/csv", "text/comma-separated-values")
# Signatures of the image formats read by OCR (TIFF: both byte orders).
_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", PNG),
    (b"\xff\xd8\xff", JPEG),
    (b"II*\x00", TIFF),
    (b"MM\x00*", TIFF),
)
# OLE compound file (legacy .doc, or an encrypted OOXML package).
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")
# WHATWG MIME sniffing: "HTML" signatures, followed by a space or ">".
_HTML_SIGNATURE = re.compile(
    r"^\s*<(!doctype html|html|head|script|iframe|h1|div|font|table|a|style|title|b|body|br|p|!--)[\s>]",
    re.IGNORECASE,
)
# XHTML served with an XML prolog.
_XHTML = re.compile(
    r"^\s*<\?xml[^>]*>\s*(<!--.*?-->\s*)*<(!doctype html|html)[\s>]", re.IGNORECASE | re.DOTALL
)
_ATX_HEADING = re.compile(r"^#{1,6} \S", re.MULTILINE)
_BINARY_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f]")


def is_encrypted_ooxml(data: bytes) -> bool:
    """A password-protected OOXML package (DOCX): an OLE compound file that
    holds an ``EncryptedPackage`` stream."""
    return data.startswith(_OLE_MAGIC) and _ENCRYPTED_PACKAGE in data


def detect_content_type(data: bytes, *, filename: str = "", claimed_type: str = "") -> str:
    """The MIME type of ``data``; :class:`UnsupportedMediaType` (415) otherwise."""
    name = filename.lower()
    claim = claimed_type.split(";")[0].strip().lower()
    signed = _signed_type(data)
    if signed is not None:
        return signed
    if data.startswith(b"PK\x03\x04"):
        return _zip_type(data, name, claim)
    if data.startswith(_OLE_MAGIC):
        if is_encrypted_ooxml(data):
            # Password-protected DOCX: accepted, then fails as docx_encrypted.
            return DOCX
        raise UnsupportedMediaType(f"Legacy Office files (.doc) are not accepted. {ACCEPTED_MESSAGE}")
    text = decode_text(data)
    if text is None:
        raise UnsupportedMediaType(f"The file is not a recognised document type. {ACCEPTED_MESSAGE}")
    # Only the start counts: a text *about* HTML that quotes a tag later is still text.
    if _HTML_SIGNATURE.match(text) or _XHTML.match(text[:4096]):
        return HTML
    if name.endswith(_MARKDOWN_EXTENSIONS) or claim in _MARKDOWN_CLAIMS:
        return MARKDOWN
    if name.endswith((".html", ".htm")) or claim == HTML:
        return HTML
    if name.endswith(".csv") or claim in _CSV_CLAIMS:
        return CSV
    if not name and claim in ("", PLAIN_TEXT, "application/octet-stream") and _ATX_HEADING.search(text):
        return MARKDOWN
    return PLAIN_TEXT


def _signed_type(data: bytes) -> str | None:
    """PDF or an image format, by the signature its bytes start with."""
    if b"%PDF-" in data[:1024]:  # the header may follow a little junk (PDF 1.7, 7.5.2)
        return PDF
    for magic, image_type in _IMAGE_MAGIC:
        if data.startswith(magic):
            return image_type
    return None


def decode_text(data: bytes) -> str | None:
    """UTF-8 (optionally with a BOM) or BOM-marked UTF-16; ``None`` for binary data."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            return None
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return None
    # Control characters other than whitespace mean a binary format.
    if _BINARY_CONTROL.search(text[:65536]):
        return None
    return text


def _zip_type(data: bytes, name: str, claim: str) -> str:
    """DOCX or XLSX; a damaged package named or claimed as one of them fails
    in the worker as corrupt_file."""
    names = _zip_names(data)
    if "word/document.xml" in names or name.endswith(_DOCX_EXTENSIONS) or claim == DOCX:
        return DOCX
    if "xl/workbook.xml" in names or name.endswith(_XLSX_EXTENSIONS) or claim == XLSX:
        return XLSX
    raise UnsupportedMediaType(f"ZIP archives other than DOCX and XLSX are not accepted. {ACCEPTED_MESSAGE}")


def _zip_names(data: bytes) -> list[str]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return []
