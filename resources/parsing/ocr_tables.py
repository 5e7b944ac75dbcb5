"""Ruled tables on a page read by OCR (docs/ocr.md, "Tables"): found in the
page image from its ruled lines, the rules erased, and the cells cut out
into strips for Tesseract to read (:mod:`resources.parsing.ocr`), so that a
scanned table becomes groups of rows under its header as a CSV's
(:func:`resources.parsing.tables.add_page_table`).

A table is a frame of ruled lines (runs of ink a twentieth of the page's
width across or two hundredths of its height down, joined where they touch)
at least a tenth of the page wide, enclosing at least four cells. Its cells
are the areas the frame encloses; its rows, the cells side by side, so a
page the scanner turned a little keeps its rows; its columns in reading
order, right to left when most of its letters are of a right-to-left
script. A first row of one cell across the table is its caption. Tables
without rules, or ruled by rows alone, are read as paragraphs; so are the
grids of a page past its MAX_TABLES largest, and a grid of more columns
than TABLE_MAX_COLUMNS.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from resources.parsing.base import Box, union_box
from resources.parsing.ocr_clean import black_and_white, cleaned, speckled
from resources.parsing.tables import is_table, right_to_left

# A ruled line: a run of ink this share of the page's width (across) or of
# its height (down).
RULE_ACROSS = 0.05
RULE_DOWN = 0.02
# A gap in a rule of a black-and-white page this share of its width is bridged.
RULE_GAP = 0.002
# A frame at least this share of the page's width, enclosing at least these
# many cells, each at least this share of the page's height on each side (a
# narrower area is the gap between two rules drawn as one).
MIN_WIDTH = 0.1
MIN_CELLS = 4
MIN_CELL = 0.006
# Tables read on one page at most, the largest (each costs Tesseract runs);
# the other grids are read as text.
MAX_TABLES = 8
# Grey levels below this are ink of a rule (a scanner blurs a thin line to
# grey), and a rule's run is this share ink (noise breaks a line here and there).
INK = 192
RUN_INK = 0.9
# A rule is thin: a pixel of it has one this many grey levels lighter within
# this share of the page's height across the rule (a shaded header is no rule).
CONTRAST = 64
RULE_REACH = 0.002
# A strip: the gap between two cells, its height at most (a table has as many
# strips as it takes), and what is cut from a cell's sides (left of the rules).
STRIP_GAP = 24
STRIP_HEIGHT = 8_000
CELL_INSET = 3
# Cells a strip's reading missed that are read again alone, at most, per table
# (Tesseract's line finder drops a line of a long strip now and then).
CELLS_ALONE = 40
_MARKS = dict.fromkeys([0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])


@dataclass(frozen=True)
class Grid:
    """A ruled table on a page image: where its frame's box starts (pixels),
    the frame's rule pixels in that box, and each cell's box (pixels of the
    page, ``x0, y0, x1, y1``)."""

    left: int
    top: int
    frame: Any
    boxes: list[tuple[int, int, int, int]]


def find_grids(image: Any) -> list[Grid]:
    """The ruled tables on a page image (greyscale)."""
    import numpy
    from scipy import ndimage

    pixels = numpy.asarray(image.convert("L"), dtype=numpy.int16)
    height, width = pixels.shape
    ink = pixels < INK
    reach = 2 * max(2, round(height * RULE_REACH)) + 1
    # Thin: lighter within RULE_REACH across the line (a shaded cell is no rule).
    across = ink & (ndimage.maximum_filter1d(pixels, reach, axis=0) - pixels > CONTRAST)
    down = ink & (ndimage.maximum_filter1d(pixels, reach, axis=1) - pixels > CONTRAST)
    # A rule turned a little (a photo's, a fax's) steps from one row of
    # pixels to the next: a pixel off the line counts as ink of the run.
    across = ndimage.maximum_filter1d(across, 3, axis=0)
    down = ndimage.maximum_filter1d(down, 3, axis=1)
    if black_and_white(pixels):
        # A fax's rule is broken here and there by its threshold: a short
        # gap counts as ink of the run too. (On a grey page's speckles
        # this joins letters to rules.)
        gap = numpy.ones((1, 2 * max(1, round(width * RULE_GAP)) + 1), dtype=bool)
        across = ndimage.binary_closing(across, gap)
        down = ndimage.binary_closing(down, gap.T)
    rules = _runs(across, max(16, round(width * RULE_ACROSS)), axis=1)
    rules |= _runs(down, max(16, round(height * RULE_DOWN)), axis=0)
    if not rules.any():
        return []
    rules = ndimage.binary_dilation(rules)  # a rule broken by a pixel is one rule
    labels, _ = ndimage.label(rules, structure=numpy.ones((3, 3), dtype=bool))
    smallest = max(2, round(height * MIN_CELL))
    grids = []
    for number, where in enumerate(ndimage.find_objects(labels), start=1):
        if where is None or where[1].stop - where[1].start < width * MIN_WIDTH:
            continue
        grid = _grid(labels[where] == number, where[1].start, where[0].start, smallest)
        if grid is not None:
            grids.append(grid)
    return sorted(grids, key=lambda grid: -grid.frame.size)[:MAX_TABLES]


def _runs(ink: Any, length: int, *, axis: int) -> Any:
    """The pixels in a run of ``length`` pixels along ``axis`` that are
    nearly all (RUN_INK) ink."""
    import numpy

    lines = numpy.moveaxis(ink, axis, -1)
    size = lines.shape[-1]
    if size < length:
        return numpy.zeros_like(ink)
    zero = numpy.zeros((*lines.shape[:-1], 1), dtype=numpy.int32)
    sums = numpy.concatenate((zero, numpy.cumsum(lines, axis=-1, dtype=numpy.int32)), axis=-1)
    full = (sums[..., length:] - sums[..., :-length]) >= RUN_INK * length  # a run starts at the pixel
    starts = numpy.concatenate((zero, numpy.cumsum(full, axis=-1, dtype=numpy.int32)), axis=-1)
    at = numpy.arange(size)  # a pixel is covered by a run starting up to length - 1 before it
    through = starts[..., numpy.minimum(at, size - length) + 1]
    before = starts[..., numpy.maximum(at - length + 1, 0)]
    return numpy.moveaxis(through > before, -1, axis)


def _grid(frame: Any, left: int, top: int, smallest: int) -> Grid | None:
    from scipy import ndimage

    areas, _ = ndimage.label(~frame)
    outside = {int(n) for edge in (areas[0], areas[-1], areas[:, 0], areas[:, -1]) for n in edge}
    boxes = []
    for number, where in enumerate(ndimage.find_objects(areas), start=1):
        if where is None or number in outside:
            continue
        rows, columns = where
        if rows.stop - rows.start < smallest or columns.stop - columns.start < smallest:
            continue
        boxes.append((left + columns.start, top + rows.start, left + columns.stop, top + rows.stop))
    if len(boxes) < MIN_CELLS:
        return None
    return Grid(left=left, top=top, frame=frame, boxes=boxes)


def erased(image: Any, grids: list[Grid]) -> Any:
    """``image`` without its tables' rules (Tesseract reads ruled lines as
    letters, and a page's lines of ink as lines of text)."""
    import numpy
    from PIL import Image
    from scipy import ndimage

    pixels = numpy.array(image.convert("L"))
    for grid in grids:
        height, width = grid.frame.shape
        area = pixels[grid.top : grid.top + height, grid.left : grid.left + width]
        area[ndimage.binary_dilation(grid.frame, iterations=2)] = 255
    return Image.fromarray(pixels)


@dataclass(frozen=True)
class Strip:
    """A table's cells with ink, cut from the page and stacked one under
    another (one line of text or a few each, a gap between two) for
    Tesseract to read as one block of lines; where each cell sits in it
    (``top, bottom, cell``)."""

    image: Any
    placed: list[tuple[int, int, int]]

    def read(self, data: dict[str, list[Any]], *, scale: float) -> dict[int, tuple[str, float]]:
        """Each cell's text in Tesseract's reading of the strip, and the
        mean confidence of its words (``scale``: the strip's height over
        that of the image read)."""
        words: dict[int, list[tuple[str, float]]] = {}
        for i, word in enumerate(map(_word, data["text"])):
            if not word:
                continue
            middle = (int(data["top"][i]) + int(data["height"][i]) / 2) * scale
            for top, bottom, cell in self.placed:
                if top - STRIP_GAP / 2 <= middle < bottom + STRIP_GAP / 2:
                    words.setdefault(cell, []).append((word, float(data["conf"][i])))
                    break
        return {cell: _joined(read) for cell, read in words.items()}

    def alone(self, cell: int) -> Any:
        """The cell's image alone (with the gap around it), for a cell the
        strip's reading missed."""
        top, bottom = next((top, bottom) for top, bottom, placed in self.placed if placed == cell)
        return self.image.crop((0, top - STRIP_GAP // 2, self.image.size[0], bottom + STRIP_GAP // 2))


def line_read(data: dict[str, list[Any]]) -> tuple[str, float] | None:
    """The words of Tesseract's reading of one line, and their mean confidence."""
    words = [(word, float(data["conf"][i])) for i, word in enumerate(map(_word, data["text"])) if word]
    return _joined(words) if words else None


def _word(word: Any) -> str:
    """A word Tesseract read, without the direction marks it adds around
    right-to-left lines (U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069)."""
    return str(word).translate(_MARKS).strip()


def _joined(words: list[tuple[str, float]]) -> tuple[str, float]:
    return " ".join(word for word, _ in words), sum(confidence for _, confidence in words) / len(words)


def strips(image: Any, grid: Grid) -> list[Strip]:
    """The strips of the grid's cells with ink, cut from ``image`` (its
    rules erased)."""
    import numpy
    from PIL import Image

    pixels = numpy.asarray(image.convert("L"))
    noisy = speckled(pixels)
    crops = []
    for cell, (x0, y0, x1, y1) in enumerate(grid.boxes):
        crop = pixels[y0 + CELL_INSET : y1 - CELL_INSET, x0 + CELL_INSET : x1 - CELL_INSET]
        if crop.size and int((crop < 128).sum()) >= 8:
            crops.append((cell, cleaned(crop) if noisy else crop))
    batches: list[list[tuple[int, Any, int]]] = []
    height = STRIP_HEIGHT
    for cell, crop in crops:
        if height + crop.shape[0] + STRIP_GAP > STRIP_HEIGHT:  # a new strip
            batches.append([])
            height = STRIP_GAP
        batches[-1].append((cell, crop, height))
        height += crop.shape[0] + STRIP_GAP
    out: list[Strip] = []
    for batch in batches:
        height = batch[-1][2] + batch[-1][1].shape[0] + STRIP_GAP
        width = max(crop.shape[1] for _, crop, _ in batch) + 2 * STRIP_GAP
        strip = numpy.full((height, width), 255, dtype=numpy.uint8)
        for _, crop, top in batch:
            strip[top : top + crop.shape[0], STRIP_GAP : STRIP_GAP + crop.shape[1]] = crop
        placed = [(top, top + crop.shape[0], cell) for cell, crop, top in batch]
        out.append(Strip(Image.fromarray(strip), placed))
    return out


@dataclass(frozen=True)
class Table:
    """A table read on a page: its box (page-relative), its rows of cell
    texts in reading order, each row's box, and its caption (``""``: none)."""

    bbox: Box
    rows: list[list[str]]
    row_boxes: list[Box]
    caption: str = ""


def table_of(grid: Grid, texts: list[str], *, width: int, height: int) -> Table | None:
    """The table of the grid whose cells read ``texts`` (``width`` and
    ``height``: the page image's), or ``None`` when they hold too little for
    one (fewer than two rows or two columns with text)."""
    backwards = right_to_left([texts])
    rows: list[list[int]] = []
    for index in sorted(range(len(grid.boxes)), key=lambda index: _middle(grid.boxes[index])[1]):
        if rows and grid.boxes[index][1] < _middle(grid.boxes[rows[-1][0]])[1]:
            rows[-1].append(index)  # starts above the row's first cell's middle: beside it
        else:
            rows.append([index])
    for row in rows:
        row.sort(key=lambda index: _middle(grid.boxes[index])[0], reverse=backwards)
    cells = [[texts[index] for index in row] for row in rows]
    boxes = [union_box([relative(grid.boxes[index], width, height) for index in row]) for row in rows]
    caption = ""
    if len(rows) > 2 and len(rows[0]) == 1 and len(rows[1]) > 1:
        caption, cells, boxes = cells[0][0], cells[1:], boxes[1:]
    if not is_table(cells) or max(len(row) for row in cells) > settings.TABLE_MAX_COLUMNS:
        return None  # read as text, not failed as too complex
    frame_height, frame_width = grid.frame.shape
    box = relative((grid.left, grid.top, grid.left + frame_width, grid.top + frame_height), width, height)
    return Table(box, cells, boxes, caption)


def relative(box: tuple[int, int, int, int], width: int, height: int) -> Box:
    """A box in pixels of an image ``width`` x ``height`` as page-relative 0 to 1."""
    return (box[0] / width, box[1] / height, box[2] / width, box[3] / height)


def _middle(box: tuple[int, int, int, int]) -> tuple[float, float]:
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
