from __future__ import annotations

import time
from typing import Any

import pytest
from pytest_django import Settings

from daneshyar.exceptions import UnsupportedMediaType
from resources.parsing import ParseError, detect_content_type, parse_document
from resources.parsing.detect import DOCX, HTML, MARKDOWN, PDF, PLAIN_TEXT
from tests.resources.files import (
    make_docx,
    make_encrypted_pdf,
    make_expensive_pdf,
    make_minimal_docx,
    make_pdf,
    make_pdf_with_content,
    make_zip_bomb_docx,
)


def _parse(data: bytes, **kwargs: Any) -> Any:
    return parse_document(data, content_type=detect_content_type(data, **kwargs))


def _error(data: bytes, **kwargs: Any) -> ParseError:
    with pytest.raises(ParseError) as info:
        _parse(data, **kwargs)
    return info.value


@pytest.mark.parametrize(
    ("data", "kwargs", "expected"),
    [
        (b"hello", {}, PLAIN_TEXT),
        ("caf\u00e9 \u062f\u0627\u0646\u0634".encode(), {}, PLAIN_TEXT),
        ("\ufeffbom text".encode(), {}, PLAIN_TEXT),
        ("utf16 text".encode("utf-16"), {}, PLAIN_TEXT),
        (b"# Title\n\ntext", {}, MARKDOWN),
        (b"plain *text*", {"filename": "README.md"}, MARKDOWN),
        (b"plain", {"claimed_type": "text/markdown; charset=utf-8"}, MARKDOWN),
        (b"  <!doctype html><p>x</p>", {}, HTML),
        (b"<div>fragment</div>", {"filename": "a.txt"}, HTML),
        (b"<p>para</p>", {}, HTML),
        (b'<?xml version="1.0"?>\n<html xmlns="x"><body>x</body></html>', {}, HTML),
        (b"How to write <html> pages: open the tag <body>.", {}, PLAIN_TEXT),
        (b"", {}, PLAIN_TEXT),
        (b"%PDF-1.4 whatever", {"filename": "x.txt"}, PDF),
        (b"PK\x03\x04broken", {"filename": "x.docx"}, DOCX),
    ],
)
def test_detection_from_bytes(data: bytes, kwargs: dict[str, str], expected: str) -> None:
    assert detect_content_type(data, **kwargs) == expected


def test_docx_is_detected_without_a_name() -> None:
    assert detect_content_type(make_docx([("p", "x")])) == DOCX


@pytest.mark.parametrize(
    "data",
    [
        b"GIF89a\x01\x00\x01\x00\x00\x00",
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1legacy doc",
        b"latin-1 \xe9t\xe9 text that is not utf-8",
        b"PK\x03\x04not a docx",
    ],
)
def test_other_types_are_refused(data: bytes) -> None:
    with pytest.raises(UnsupportedMediaType) as info:
        detect_content_type(data, filename="x.txt")
    assert "application/pdf" in info.value.message


def test_plain_text_paragraphs() -> None:
    document = _parse(b"First para\nsame para.\n\n\n   Second   para.  \r\n\r\nThird.")
    assert document.text == "First para\nsame para.\n\nSecond para.\n\nThird."
    assert not document.headings and document.page_at(0) is None


def test_markdown_headings_are_marked() -> None:
    document = _parse(b"# Install\n\nRun it.\n\n## Usage ##\nCall it.\n\n```\n# not a heading\n```")
    assert document.text == "Install\n\nRun it.\n\nUsage\n\nCall it.\n\n```\n# not a heading\n```"
    assert sorted(document.headings) == [0, document.text.index("Usage")]


def test_html_drops_chrome_and_code_and_keeps_headings() -> None:
    html = b"""<!DOCTYPE html><html><head><title>T</title><style>p{}</style></head><body>
    <header>Site header</header><nav><a href="/">Home</a></nav>
    <h1>Refund policy</h1><p>Refunds take <b>14</b>
    days.</p><script>alert(1)</script><ul><li>One</li><li>Two</li></ul>
    <table><tr><th>Plan</th><th>Price</th></tr><tr><td>Pro</td><td>10</td></tr></table>
    <!-- a comment --><footer>Copyright</footer></body></html>"""
    document = _parse(html)
    # The table: its row under its header (docs/ingestion.md, "Tables").
    assert document.text == (
        "Refund policy\n\nRefunds take 14 days.\n\nOne\n\nTwo\n\nTable 1, row 2\nPlan | Price\nPro | 10"
    )
    assert document.headings == frozenset({0, document.text.index("Table 1")})


def test_html_nested_thousands_deep_is_read_without_recursion() -> None:
    # Regression: the block walk recursed once per element, so 5,000 nested
    # <div> raised RecursionError (and the worker retried it four times).
    depth = 5000
    html = (
        b"<html><body><h1>" + b"<span>" * depth + b"Title" + b"</span>" * depth + b"</h1>"
        b"<nav>"
        + b"<div>" * depth
        + b"menu"
        + b"</div>" * depth
        + b"</nav>"
        + b"<div>" * depth
        + b"Deep <b>text</b>."
        + b"</div>" * depth
        + b"<p>After.</p></body></html>"
    )
    document = _parse(html)
    assert document.text == "Title\n\nDeep text.\n\nAfter."
    assert document.headings == frozenset({0})


def test_pdf_text_per_page_with_page_numbers() -> None:
    document = _parse(make_pdf(["Alpha line one.\nAlpha line two.", "", "Gamma on page three."]))
    assert "Alpha line one." in document.text and "Gamma on page three." in document.text
    assert document.page_at(0) == 1
    assert document.page_at(document.text.index("Gamma")) == 3


def test_encrypted_pdf() -> None:
    error = _error(make_encrypted_pdf(["secret"]))
    assert error.code == "pdf_encrypted"
    assert "password" in error.message


def test_pdf_encrypted_with_an_empty_password_opens() -> None:
    document = _parse(make_encrypted_pdf(["readable text"], password=""))
    assert "readable text" in document.text


@pytest.mark.parametrize(
    "data", [b"%PDF-1.4\n%%EOF", b"%PDF-1.7\n1 0 obj << >> garbage", make_pdf(["x"])[:60]]
)
def test_corrupt_pdf(data: bytes) -> None:
    assert _error(data).code == "corrupt_file"


def test_pdf_without_text_is_empty() -> None:
    error = _error(make_pdf([""]))
    assert error.code == "empty_document"
    assert "OCR" in error.message


def test_docx_paragraphs_headings_and_tables() -> None:
    data = make_docx(
        [("h1", "Guide"), ("p", "Intro text."), ("h2", "Step one"), ("p", "Do it.")], [["a", "b"]]
    )
    document = _parse(data)
    assert document.text == "Guide\n\nIntro text.\n\nStep one\n\nDo it.\n\na | b"
    assert sorted(document.headings) == [0, document.text.index("Step one")]


def test_corrupt_docx() -> None:
    assert _error(b"PK\x03\x04" + b"\x00" * 100, filename="a.docx").code == "corrupt_file"


def test_encrypted_docx() -> None:
    data = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 64 + "EncryptedPackage".encode("utf-16-le")
    assert detect_content_type(data) == DOCX
    assert _error(data).code == "docx_encrypted"


@pytest.mark.parametrize("data", [b"", b" \n\n\t ", b"<html><body><script>x()</script></body></html>"])
def test_empty_documents(data: bytes) -> None:
    assert _error(data).code == "empty_document"


def test_text_over_the_limit(settings: Settings) -> None:
    settings.MAX_EXTRACTED_CHARS = 1000
    error = _error(("word " * 300).encode())
    assert error.code == "text_too_long"
    assert "1,000" in error.message


# --- Bounds (docs/ingestion.md, "Bounds") -------------------------------------


def test_zip_bomb_docx_fails_before_it_is_unpacked() -> None:
    bomb = make_zip_bomb_docx()
    assert len(bomb) < 45_000
    began = time.monotonic()
    error = _error(bomb)
    assert error.code == "file_too_large_uncompressed"
    assert "expands 1,0" in error.message and "INGEST_MAX_COMPRESSION_RATIO" in error.message
    assert time.monotonic() - began < 1


def test_docx_within_the_ratio_but_over_the_uncompressed_total_fails(settings: Settings) -> None:
    settings.INGEST_MAX_COMPRESSION_RATIO = 10_000  # the padding packs about 1,000 to 1
    settings.INGEST_MAX_UNCOMPRESSED_BYTES = 100_000
    error = _error(make_minimal_docx("Padded.", padding=200_000))
    assert error.code == "file_too_large_uncompressed"
    assert "limit is 100,000 bytes" in error.message
    settings.INGEST_MAX_UNCOMPRESSED_BYTES = 1_000_000
    assert _parse(make_minimal_docx("Padded.", padding=200_000)).text == "Padded."


def test_docx_with_too_many_entries_is_too_complex(settings: Settings) -> None:
    settings.INGEST_MAX_ARCHIVE_ENTRIES = 2
    assert _error(make_minimal_docx("Three entries.")).code == "file_too_complex"


def test_pdf_over_the_page_limit_is_too_complex(settings: Settings) -> None:
    settings.INGEST_PDF_MAX_PAGES = 3
    error = _error(make_pdf([f"Page {n}." for n in range(4)]))
    assert error.code == "file_too_complex" and "4 pages" in error.message
    assert _parse(make_pdf([f"Page {n}." for n in range(3)])).pages[-1][1] == 3


def test_pdf_over_the_object_limit_is_too_complex(settings: Settings) -> None:
    settings.INGEST_PDF_MAX_OBJECTS = 100
    # 3 objects, then 2 per page.
    error = _error(make_pdf([f"Page {n}." for n in range(50)]))
    assert error.code == "file_too_complex" and "103 objects" in error.message


def test_pdf_stream_that_expands_past_the_decompression_limit() -> None:
    # 80 MB of spaces in 78 kB; pypdf stops decompressing at 75 MB.
    error = _error(make_pdf_with_content(b" " * 80_000_000))
    assert error.code == "file_too_large_uncompressed"


def test_expensive_pdf_stops_at_the_parse_deadline() -> None:
    data = make_expensive_pdf(operators=300_000)
    assert len(data) < 10_000
    began = time.monotonic()
    with pytest.raises(ParseError) as info:
        parse_document(data, content_type=PDF, timeout=0.5)
    took = time.monotonic() - began
    assert info.value.code == "ingest_timeout"
    assert "0.5 seconds" in info.value.message
    # The deadline is checked between operators, once pypdf has tokenised the
    # page (about 2 s for 300,000 operators on the development machine).
    assert took < 15
    assert parse_document(data, content_type=PDF, timeout=120).text == "Expensive page."


def test_parse_deadline_holds_for_text_formats() -> None:
    text = ("A paragraph of text.\n\n" * 20_000).encode()
    with pytest.raises(ParseError) as info:
        parse_document(text, content_type=PLAIN_TEXT, timeout=0)
    assert info.value.code == "ingest_timeout"


@pytest.mark.parametrize("kind", ["pdf", "docx", "html"])
def test_the_task_soft_time_limit_passes_through_the_parsers(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Regression: the parsers' catch-all for library errors turned Celery's
    # SoftTimeLimitExceeded into corrupt_file.
    from celery.exceptions import SoftTimeLimitExceeded

    def expired(*args: Any, **kwargs: Any) -> Any:
        raise SoftTimeLimitExceeded()

    if kind == "pdf":
        monkeypatch.setattr("resources.parsing.pdf_tables.check_deadline", expired)
        data = make_pdf(["Some text."])
    elif kind == "docx":
        data = make_docx([("p", "Some text.")])
        monkeypatch.setattr("docx.Document", expired)
    else:
        monkeypatch.setattr("resources.parsing.html.BeautifulSoup", expired)
        data = b"<p>Some text.</p>"
    with pytest.raises(SoftTimeLimitExceeded):
        _parse(data)
