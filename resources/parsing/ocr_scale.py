"""A page image's lines of ink (:mod:`resources.parsing.ocr`): the scale
Tesseract reads them best at, and how many of them a reading covered."""

from __future__ import annotations

from typing import Any

# The height of a line of text (rows with ink) Tesseract reads best, in
# pixels, and how far a page image may be shrunk to reach it.
LINE_PIXELS = 26
MIN_SCALE = 0.4
# A table's cells are read larger: shrunk to a page's line height, Persian
# and Arabic letters lose their dots (a 9-point table at 300 dpi: 13 rows of
# 120 misread, against 6 as scanned; bench/table_chat.py).
CELL_LINE_PIXELS = 48
# A reading that spans less of a page's lines of ink than this is tried again
# at the page's other scale.
MIN_COVERAGE = 0.97


def _ink_rows(image: Any) -> Any:
    """Per row of pixels, whether it holds a run of ink (a line of text, not a speck)."""
    import numpy

    ink = numpy.asarray(image.convert("L")) < 128
    rows: Any = ink.any(axis=1)
    edges = numpy.flatnonzero(numpy.diff(numpy.concatenate(([0], rows.astype(numpy.int8), [0]))))
    for start, end in zip(edges[0::2], edges[1::2], strict=True):
        if end - start < 4:
            rows[start:end] = False
    return rows


def coverage(image: Any, data: dict[str, list[Any]]) -> float:
    """The share of the page's rows with ink that a word Tesseract read spans (1 on a blank page)."""
    import numpy

    rows = _ink_rows(image)
    covered = numpy.zeros_like(rows)
    for i, word in enumerate(data["text"]):
        if str(word).strip():
            top = int(data["top"][i])
            covered[top : top + int(data["height"][i])] = True
    total = int(rows.sum())
    return 1.0 if total == 0 else float((rows & covered).sum()) / total


def scaled_for_ocr(image: Any, *, line: int = LINE_PIXELS) -> Any:
    """``image`` shrunk so that its lines of text are about ``line`` pixels
    high, never enlarged nor shrunk below MIN_SCALE: a line's height is the
    median run of rows with ink (the page's projection profile)."""
    import numpy

    rows = _ink_rows(image)
    edges = numpy.flatnonzero(numpy.diff(numpy.concatenate(([0], rows.astype(numpy.int8), [0]))))
    heights = edges[1::2] - edges[0::2]
    if not len(heights):
        return image
    scale = max(MIN_SCALE, min(1.0, line / float(numpy.median(heights))))
    if scale > 0.95:
        return image
    from PIL import Image

    size = (max(1, round(image.size[0] * scale)), max(1, round(image.size[1] * scale)))
    return image.resize(size, Image.Resampling.LANCZOS)
