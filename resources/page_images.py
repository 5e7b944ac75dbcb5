"""A page of a resource drawn as a PNG, from its original bytes: a PDF's page
by PDFium (``pypdfium2``), an image (a TIFF's frame) by Pillow; what the
console shows beside a passage (docs/console.md, docs/ocr.md).

Bounded: the longest side at most ``PAGE_IMAGE_MAX_SIDE`` pixels, and an
image (or an image drawn on a PDF's page) over ``OCR_MAX_IMAGE_PIXELS`` is
refused before it is decoded, as ingestion refuses it. Every way of not
having the page (a format without pages, a page out of range, the original
bytes gone, bytes that cannot be read) is a ``NotFound`` saying which.
"""

from __future__ import annotations

import io
import threading
import warnings
from typing import Any

from django.conf import settings

from daneshyar.exceptions import NotFound
from resources.models import Resource, ResourceFile
from resources.parsing.detect import IMAGES, PDF

# The longest side of a drawn page, in pixels: a page fills a screen without
# the console sending megabytes (a letter page is 1236 x 1600).
PAGE_IMAGE_MAX_SIDE = 1600

# PDFium is not thread-safe; a process draws one PDF page at a time.
_PDFIUM = threading.Lock()


def resource_page_png(*, resource: Resource, page: int) -> bytes:
    """Page ``page`` (1-based, as ``Passage.page`` counts) of ``resource`` as PNG bytes."""
    if resource.content_type != PDF and resource.content_type not in IMAGES:
        raise NotFound("This resource's format has no pages.")
    data = ResourceFile.objects.filter(resource=resource).values_list("data", flat=True).first()
    if data is None:
        raise NotFound("The original file of this resource is no longer stored.")
    if page < 1:
        raise NotFound(f"The resource has no page {page}.")
    image = _pdf_page(bytes(data), page) if resource.content_type == PDF else _image_page(bytes(data), page)
    from PIL import Image

    buffer = io.BytesIO()
    # Through the class: a ``save`` on a bare name reads, to the scan of the
    # tables' writers (tests/table_writers.py), as a model's save.
    Image.Image.save(image, buffer, format="PNG")
    return buffer.getvalue()


def _pdf_page(data: bytes, number: int) -> Any:
    import pypdfium2

    with _PDFIUM:
        try:
            document = pypdfium2.PdfDocument(data)
        except pypdfium2.PdfiumError as exc:
            raise NotFound("The original PDF of this resource could not be read.") from exc
        try:
            if number > len(document):
                raise NotFound(f"The resource has no page {number}; it has {len(document)}.")
            page = document[number - 1]
            _check_page_images(page, number)
            width, height = page.get_size()  # in points, the crop box as shown
            scale = PAGE_IMAGE_MAX_SIDE / max(width, height, 1.0)
            # A copy: the bitmap's buffer goes with the document.
            return page.render(scale=scale).to_pil().copy()
        except pypdfium2.PdfiumError as exc:
            raise NotFound(f"Page {number} of the PDF could not be drawn.") from exc
        finally:
            document.close()


def _check_page_images(page: Any, number: int) -> None:
    """Refuse a page drawing an image over ``OCR_MAX_IMAGE_PIXELS``: PDFium
    would decode it whole at any scale. Read from the image's dictionary, not decoded."""
    import pypdfium2.raw as pdfium_c

    for image in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE]):
        width, height = image.get_px_size()
        if width * height > settings.OCR_MAX_IMAGE_PIXELS:
            raise NotFound(f"Page {number} of the PDF holds an image too large to draw.")


def _image_page(data: bytes, number: int) -> Any:
    """Frame ``number`` of the image, checked against the pixel bound before
    it is decoded, shrunk to the bound on its longest side."""
    from PIL import Image

    try:
        with warnings.catch_warnings():
            # Pillow's own bomb check warns below twice its limit; ours comes first.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image: Any = Image.open(io.BytesIO(data))
            frames = getattr(image, "n_frames", 1)
            if number > frames:
                raise NotFound(f"The resource has no page {number}; it has {frames}.")
            image.seek(number - 1)
            width, height = image.size
            if width * height > settings.OCR_MAX_IMAGE_PIXELS:
                raise NotFound(f"Page {number} of the image is too large to draw.")
            image.draft(None, (PAGE_IMAGE_MAX_SIDE, PAGE_IMAGE_MAX_SIDE))  # a JPEG decoded at a smaller scale
            image.load()  # decoded here, where a damaged file is told apart
            if image.mode not in ("1", "L", "LA", "RGB", "RGBA", "P"):  # 16-bit, CMYK: as PNG shows them
                image = image.convert("RGB")
            image.thumbnail((PAGE_IMAGE_MAX_SIDE, PAGE_IMAGE_MAX_SIDE))
            return image
    except NotFound:
        raise
    except Exception as exc:  # Pillow raises many kinds on damaged files
        raise NotFound("The original image of this resource could not be read.") from exc
