"""A page image's noise and light, made readable for OCR
(:mod:`resources.parsing.ocr`, docs/ocr.md): a photo's unevenly lit paper,
a black-and-white page's lone specks (a fax's line noise), and the cells
of a speckled page's tables (:mod:`resources.parsing.ocr_tables`)."""

from __future__ import annotations

from typing import Any

# A page's paper is its lightest pixels within this share of its width; a
# page whose paper is everywhere at least this light is evenly lit.
PAPER_REACH = 0.04
EVEN_PAPER = 216
# A black-and-white page's black spots of SPECK pixels or fewer with no
# other ink within SPECK_REACH pixels are specks.
SPECK = 1
SPECK_REACH = 8
# A page whose light background's neighbouring pixels differ by this many
# grey levels on average is speckled (see speckled); its cells are smoothed
# (a Gaussian of this many pixels) and grey levels within SPECKLE spreads
# of their paper's are made white (see cleaned).
NOISE = 4.0
SMOOTH = 0.7
SPECKLE = 3.0


def evenly_lit(image: Any) -> Any:
    """``image`` (greyscale) with its paper made evenly light: a phone's
    photo of a page, lit from one side, darkens towards the other, and its
    paper there is darker than the ink threshold of the rules and of
    Tesseract. Each pixel is divided by the paper's level around it (the
    lightest pixels within PAPER_REACH of the page's width, smoothed); a
    page whose paper is even (a scan, a fax, a drawn page) comes back as it
    was."""
    import numpy
    from PIL import Image
    from scipy import ndimage

    pixels = numpy.asarray(image.convert("L"), dtype=numpy.float32)
    height, width = pixels.shape
    step = max(1, round(width / 400))  # the paper's level varies slowly: measured small
    small = pixels[::step, ::step]
    reach = max(3, round(small.shape[1] * PAPER_REACH))
    paper = ndimage.uniform_filter(ndimage.maximum_filter(small, size=reach), size=reach)
    if float(numpy.percentile(paper, 2)) >= EVEN_PAPER:
        return image
    paper = numpy.kron(paper, numpy.ones((step, step), dtype=numpy.float32))[:height, :width]
    lit = numpy.clip(pixels * (255.0 / numpy.maximum(paper, 1.0)), 0, 255)
    return Image.fromarray(lit.astype(numpy.uint8))


def black_and_white(pixels: Any) -> bool:
    """Whether the page is black and white (a fax, a scanner's 1-bit mode):
    fewer than one pixel in a hundred grey."""
    return bool(((pixels > 0) & (pixels < 255)).mean() < 0.01)


def despeckled(image: Any) -> Any:
    """A black-and-white page without its specks (a fax's line noise):
    black spots of SPECK pixels or fewer with no other ink within
    SPECK_REACH pixels made white; a grey page as it came.

    Tesseract reads a speck as a letter's dot (``ب`` read ``ت``) or as
    punctuation: bench/ocr_quality.py's faxed Persian pages read at a
    character error rate of 15.8 % with their specks, 1.05 % without. The
    dots of a 9-point Persian letter at 200 dpi are single pixels a few
    pixels from the letter: spots of two pixels, or specks within three
    pixels of ink, took them too (108 and 61 of bench/table_chat.py's 123
    faxed Persian rows misread, against 45 with the specks and 43 so).
    """
    import numpy
    from PIL import Image
    from scipy import ndimage

    pixels = numpy.asarray(image.convert("L"))
    if not black_and_white(pixels):
        return image
    ink = pixels < 128
    labels, _ = ndimage.label(ink, structure=numpy.ones((3, 3), dtype=bool))
    small = numpy.bincount(labels.ravel()) <= SPECK
    small[0] = False
    specks = small[labels]
    near = ndimage.binary_dilation(ink & ~specks, iterations=SPECK_REACH)
    alone = specks & ~near
    if not alone.any():
        return image
    cleaned = pixels.copy()
    cleaned[alone] = 255
    return Image.fromarray(cleaned)


def cleaned(crop: Any) -> Any:
    """A speckled cell smoothed and its paper made white: grey levels within
    SPECKLE spreads (scaled median absolute deviation) of its light pixels'
    median are paper.

    Tesseract's global threshold splits a cell of little ink between light
    and lighter paper and reads the speckles as letters; a threshold of our
    own at the ink, or a median filter, takes the dots off Persian letters
    (``یشمی`` read ``پشمی``). On bench/table_chat.py's noisy Persian tables,
    123 rows: 19 misread through the median filter, 6 so (a noisier scan,
    not fitted on: 26 and 13).
    """
    import numpy
    from scipy import ndimage

    crop = ndimage.gaussian_filter(crop.astype(numpy.float32), SMOOTH)
    light = crop[crop > 160]
    if light.size == 0:
        return numpy.clip(crop, 0, 255).astype(numpy.uint8)
    middle = float(numpy.median(light))
    spread = 1.4826 * float(numpy.median(numpy.abs(light - middle)))
    return numpy.clip(numpy.where(crop > middle - SPECKLE * spread, 255, crop), 0, 255).astype(numpy.uint8)


def speckled(pixels: Any) -> bool:
    """Whether the page is speckled (a scanner's noise): neighbouring pixels
    of its light background differ by NOISE grey levels on average (0.1 on
    a clean page, 13 on bench/ocr_quality.py's scan). A speckled page's
    cells are read :func:`cleaned`."""
    import numpy

    light = pixels > 200
    both = light[:, 1:] & light[:, :-1]
    if not both.any():
        return False
    steps = numpy.abs(numpy.diff(pixels.astype(numpy.int16), axis=1))[both]
    return bool(steps.mean() > NOISE)
