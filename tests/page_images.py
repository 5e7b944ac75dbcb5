"""Page images of a text, drawn at test time for the OCR tests and bench/ocr_quality.py.

Pillow draws with libraqm (HarfBuzz shaping, FriBiDi ordering), so Persian
and Arabic letters take their joined forms and a right-to-left line reads
right to left, as a printed page does. DejaVu Sans (Debian's
``fonts-dejavu-core``) at 12 points on a US-letter page with one-inch
margins, lines 1.5 apart: what a scanner at ``dpi`` would see of a clean page.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
PAGE_INCHES = (8.5, 11.0)
MARGIN_INCHES = 1.0
POINTS = 12


def page_images(
    paragraphs: list[str], *, dpi: int = 300, rtl: bool = False, language: str = "en"
) -> list[Any]:
    """The pages (Pillow images, greyscale) holding ``paragraphs``, a blank
    line between two, words wrapped at the right margin."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(str(FONT), size=round(POINTS * dpi / 72), layout_engine=ImageFont.Layout.RAQM)
    width, height = (round(side * dpi) for side in PAGE_INCHES)
    margin = round(MARGIN_INCHES * dpi)
    line_height = round(POINTS * dpi / 72 * 1.5)
    direction = "rtl" if rtl else "ltr"
    pages: list[Any] = []
    y = height  # start a page at the first line
    for paragraph in paragraphs:
        for line in _wrap(paragraph, font, width - 2 * margin, direction, language):
            if y + line_height > height - margin:
                pages.append(Image.new("L", (width, height), 255))
                y = margin
            draw = ImageDraw.Draw(pages[-1])
            x = width - margin if rtl else margin
            draw.text(
                (x, y),
                line,
                font=font,
                fill=0,
                direction=direction,
                language=language,
                anchor="ra" if rtl else "la",
            )
            y += line_height
        y += line_height
    return pages


def _wrap(text: str, font: Any, width: int, direction: str, language: str) -> list[str]:
    lines: list[str] = []
    line = ""
    for word in text.split():
        candidate = f"{line} {word}" if line else word
        if line and font.getlength(candidate, direction=direction, language=language) > width:
            lines.append(line)
            line = word
        else:
            line = candidate
    if line:
        lines.append(line)
    return lines


def image_bytes(images: list[Any], *, format: str = "PNG", dpi: int = 300) -> bytes:
    """``images`` in one file (several frames: a multi-page TIFF)."""
    buffer = io.BytesIO()
    first, *rest = images
    extra: dict[str, Any] = {"save_all": True, "append_images": rest} if rest else {}
    first.save(buffer, format=format, dpi=(dpi, dpi), **extra)
    return buffer.getvalue()


def scanned_pdf(images: list[Any], *, dpi: int = 300) -> bytes:
    """A PDF of ``images``, one page each, without a text layer (a scan)."""
    buffer = io.BytesIO()
    first, *rest = [image.convert("RGB") for image in images]
    first.save(buffer, format="PDF", resolution=float(dpi), save_all=True, append_images=rest)
    return buffer.getvalue()


def character_error_rate(read: str, expected: str) -> float:
    """Edit distance (characters inserted, deleted, substituted) over the
    expected text's length, every run of whitespace in both counted as one space."""
    got, want = " ".join(read.split()), " ".join(expected.split())
    previous = list(range(len(got) + 1))
    for i, wanted in enumerate(want, start=1):
        current = [i]
        for j, seen in enumerate(got, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (wanted != seen)))
        previous = current
    return previous[-1] / max(1, len(want))


def table_image(
    rows: list[list[str]],
    *,
    dpi: int = 300,
    rtl: bool = False,
    language: str = "en",
    above: str = "",
    points: int = 9,
) -> Any:
    """A page (a Pillow image, greyscale) with ``rows`` drawn as a ruled
    table: a frame, a rule between every two rows and columns, the first
    column on the right for a right-to-left language, each cell's text
    padded by half a line; ``above``, a paragraph over the table."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(str(FONT), size=round(points * dpi / 72), layout_engine=ImageFont.Layout.RAQM)
    width, height = (round(side * dpi) for side in PAGE_INCHES)
    margin = round(MARGIN_INCHES * dpi)
    direction = "rtl" if rtl else "ltr"
    pad = round(points * dpi / 72 * 0.5)
    row_height = round(points * dpi / 72 * 1.7)
    rule = max(1, round(dpi / 150))
    columns = max(len(row) for row in rows)
    widths = [
        max(font.getlength(row[c], direction=direction, language=language) for row in rows if c < len(row))
        + 2 * pad
        for c in range(columns)
    ]
    page = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(page)
    y = margin
    if above:
        line_height = round(points * dpi / 72 * 1.5)
        for line in _wrap(above, font, width - 2 * margin, direction, language):
            x = width - margin if rtl else margin
            anchor = "ra" if rtl else "la"
            draw.text((x, y), line, font=font, fill=0, direction=direction, language=language, anchor=anchor)
            y += line_height
        y += line_height
    total = round(sum(widths))
    left = width - margin - total if rtl else margin
    edges = [left]
    for w in reversed(widths) if rtl else widths:
        edges.append(edges[-1] + round(w))
    order = list(reversed(range(columns))) if rtl else list(range(columns))
    for r, row in enumerate(rows):
        top = y + r * row_height
        for position, c in enumerate(order):
            if c >= len(row):
                continue
            x = edges[position + 1] - pad if rtl else edges[position] + pad
            draw.text(
                (x, top + row_height // 2),
                row[c],
                font=font,
                fill=0,
                direction=direction,
                language=language,
                anchor="rm" if rtl else "lm",
            )
    bottom = y + len(rows) * row_height
    for r in range(len(rows) + 1):
        draw.line([(edges[0], y + r * row_height), (edges[-1], y + r * row_height)], fill=0, width=rule)
    for x in edges:
        draw.line([(x, y), (x, bottom)], fill=0, width=rule)
    return page
