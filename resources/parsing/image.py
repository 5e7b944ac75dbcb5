"""PNG, JPEG and TIFF (every frame of a multi-page TIFF): read by OCR
(:mod:`resources.parsing.ocr`), one page per image or frame, its ruled
tables as tables (:mod:`resources.parsing.ocr_tables`)."""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator
from typing import Any

from resources.parsing.base import PASS_THROUGH, DocumentBuilder, ParsedDocument, ParseError, check_deadline
from resources.parsing.ocr import check_image, ocr_page, ocr_pages_total
from resources.parsing.ocr_regions import add_regions


def parse_image(data: bytes) -> ParsedDocument:
    builder = DocumentBuilder()
    for number, frame in enumerate(_frames(data), start=1):
        check_deadline()
        builder.start_page(number)
        add_regions(builder, ocr_page(frame, page=number))
    try:
        return builder.build()
    except ParseError as exc:
        if exc.code == "empty_document":
            raise ParseError("empty_document", "No text was recognised in the image (OCR).") from exc
        raise


def _frames(data: bytes) -> Iterator[Any]:
    """Each frame of the image, greyscale, checked against the pixel bound
    before it is decoded."""
    from PIL import Image, ImageSequence

    try:
        with warnings.catch_warnings():
            # Pillow's own bomb check warns below twice its limit; ours is check_image.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
            ocr_pages_total(int(getattr(image, "n_frames", 1)))
            for frame in ImageSequence.Iterator(image):
                check_image(frame)
                yield frame.convert("L")
    except PASS_THROUGH:
        raise
    except Image.DecompressionBombError as exc:
        raise ParseError("file_too_complex", f"The image is too large to read ({exc}).") from exc
    except Exception as exc:  # Pillow raises many kinds on damaged files
        raise ParseError("corrupt_file", "The image is damaged and could not be read.") from exc
