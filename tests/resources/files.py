"""Small real documents built in memory for the tests."""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Mapping


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[str]) -> bytes:
    """A valid PDF with one text line per line of each page (Helvetica)."""
    objects: list[bytes] = []
    page_ids = [4 + 2 * i for i in range(len(pages))]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{pid} 0 R" for pid in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for pid, text in zip(page_ids, pages, strict=True):
        lines = " ".join(f"({_escape(line)}) Tj T*" for line in text.split("\n"))
        stream = f"BT /F1 11 Tf 14 TL 50 760 Td {lines} ET".encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {pid + 1} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def make_pdf_with_content(content: bytes, *, pages: int = 1) -> bytes:
    """A PDF of ``pages`` pages that all show one content stream, ``content``
    (FlateDecode-compressed)."""
    packed = zlib.compress(content, 9)
    kids = " ".join("4 0 R" for _ in range(pages)).encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed + b"\nendstream",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def make_expensive_pdf(operators: int = 600_000, *, pages: int = 1) -> bytes:
    """A few kilobytes that cost seconds of CPU per page: one line of text,
    then ``operators`` no-op graphics operators (``q Q``) that the text
    extractor tokenises and walks one by one, on every page."""
    content = b"BT /F1 11 Tf 50 760 Td (Expensive page.) Tj ET " + b"q Q " * operators
    return make_pdf_with_content(content, pages=pages)


def make_encrypted_pdf(pages: list[str], password: str = "s3cret") -> bytes:  # noqa: S107
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf(pages))))
    writer.encrypt(user_password=password, owner_password="owner-" + password, algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx(blocks: list[tuple[str, str]], table: list[list[str]] | None = None) -> bytes:
    """``blocks``: (kind, text) with kind "h1", "h2" or "p"."""
    import docx

    document = docx.Document()
    for kind, text in blocks:
        if kind.startswith("h"):
            document.add_heading(text, level=int(kind[1:]))
        else:
            document.add_paragraph(text)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


_CONTENT_TYPES = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    b'<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    b'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    b'<Default Extension="xml" ContentType="application/xml"/>'
    b'<Override PartName="/word/document.xml" '
    b'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
    b"</Types>"
)
_RELS = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    b'<Relationship Id="rId1" Target="word/document.xml" '
    b'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"/>'
    b"</Relationships>"
)
_DOCUMENT = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>%s'
    b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
    b"<w:body><w:p><w:r><w:t>%s</w:t></w:r></w:p></w:body></w:document>"
)


def make_minimal_docx(text: str, *, padding: int = 0) -> bytes:
    """The smallest DOCX python-docx opens: one paragraph of ``text``, after
    a comment of ``padding`` spaces (deflate packs them about 1,000 to 1)."""
    comment = b"<!--" + b" " * padding + b"-->" if padding else b""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as package:
        package.writestr("[Content_Types].xml", _CONTENT_TYPES)
        package.writestr("_rels/.rels", _RELS)
        package.writestr("word/document.xml", _DOCUMENT % (comment, text.encode()))
    return out.getvalue()


def make_zip_bomb_docx(expanded_bytes: int = 40 * 1024 * 1024) -> bytes:
    """A DOCX of about 42 kB whose ``word/document.xml`` unpacks to
    ``expanded_bytes``: a well-formed document, so only the bounds stop it."""
    return make_minimal_docx("A small document.", padding=expanded_bytes)


def long_text(paragraphs: int = 12, sentences: int = 8, seed: str = "") -> str:
    """Distinct English-like paragraphs (so passages differ from each other)."""
    topics = [
        "solar panels",
        "river otters",
        "tax filing",
        "bread baking",
        "glacier retreat",
        "chess openings",
    ]
    out = []
    for p in range(paragraphs):
        topic = topics[p % len(topics)]
        body = " ".join(
            f"Fact {p}.{s}{seed} about {topic}: measurement number {p * 31 + s} was recorded carefully."
            for s in range(sentences)
        )
        out.append(body)
    return "\n\n".join(out)


def make_zip(entries: Mapping[str, bytes | str], *, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A zip archive of ``entries`` (name → content)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def make_table_pdf(
    rows: list[list[str]], *, before: str = "", after: str = "", row_height: int = 16, caption: str = ""
) -> bytes:
    """One page: the lines of ``before``, then ``rows`` as a table ruled with
    ``re`` (its frame) and ``l`` (its inner lines), a cell's text placed with
    ``Td``/``Tj``, then the lines of ``after`` (Helvetica, no font widths:
    columns share 500 points, at most 150 each). With ``caption``: a first
    row of one cell across the table holds it."""
    width, left = min(150, 500 // len(rows[0])), 50
    top = 760 - 14 * (len(before.splitlines()) + 1) if before else 740
    bottom = top - row_height * len(rows)
    right = left + width * len(rows[0])
    ops = [
        f"BT /F1 11 Tf 50 {760 - 14 * n} Td ({_escape(line)}) Tj ET"
        for n, line in enumerate(before.splitlines())
    ]
    if caption:
        ops.append(f"{left} {top} {right - left} {row_height} re S")
        ops.append(f"BT /F1 9 Tf {left + 4} {top + 5} Td ({_escape(caption)}) Tj ET")
    ops.append(f"0.5 w {left} {bottom} {right - left} {top - bottom} re S")
    ops += [
        f"{left} {top - row_height * r} m {right} {top - row_height * r} l S" for r in range(1, len(rows))
    ]
    ops += [f"{left + width * c} {bottom} m {left + width * c} {top} l S" for c in range(1, len(rows[0]))]
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            x, y = left + width * c + 4, top - row_height * (r + 1) + 5
            ops.append(f"BT /F1 9 Tf {x} {y} Td ({_escape(cell)}) Tj ET")
    for n, line in enumerate(after.splitlines()):
        ops.append(f"BT /F1 11 Tf 50 {bottom - 24 - 14 * n} Td ({_escape(line)}) Tj ET")
    return make_pdf_with_content("\n".join(ops).encode("latin-1"))
