"""Text from page images with Tesseract (docs/ocr.md): paragraphs in reading
order, each with where it sits on its page.

Tesseract is a program, not a library: :mod:`pytesseract` runs it once per
page with a timeout. Which trained models it uses comes from the document's
language (``metadata.language``), else ``OCR_LANGUAGES``. A server without
Tesseract or without a model fails the document with ``ocr_unavailable``,
saying what to install; the bounds (``OCR_MAX_PAGES``, ``OCR_TIMEOUT_SECONDS``,
``OCR_MAX_IMAGE_PIXELS``) fail it with ``file_too_complex`` or
``ingest_timeout``.

In turns (:class:`Turn`, OCR_PAGES_PER_TURN): an ingestion attempt reads a
few pages, keeps them, and ends with :class:`TurnOver` at the next page it
would read; the next attempt reads the pages kept instead of running
Tesseract again, and the budgets count the pages and seconds of every turn.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from resources.parsing.base import Box, ParseError, check_deadline, time_left, union_box

# Tesseract's trained models of the languages the service speaks (BCP 47
# primary subtag -> model name).
MODELS = {"en": "eng", "fa": "fas", "ar": "ara"}
# The height of a line of text (rows with ink) Tesseract reads best, in
# pixels, and how far a page image may be shrunk to reach it.
LINE_PIXELS = 26
MIN_SCALE = 0.4
# A reading that spans less of a page's lines of ink than this is tried again
# at the page's other scale.
MIN_COVERAGE = 0.97
INSTALL_HINT = "apt-get install tesseract-ocr tesseract-ocr-fas tesseract-ocr-ara"


@dataclass(frozen=True)
class Region:
    """A paragraph the OCR read: its lines, and its box in page-relative
    coordinates 0 to 1 (``x0, y0, x1, y1``, origin top left)."""

    text: str
    bbox: Box


class TurnOver(ParseError):
    """The turn has read its pages: the document goes back to the queue,
    its pages kept, to be continued by another attempt (not a failure)."""

    def __init__(self, pages: int):
        super().__init__("ocr_turn_over", f"{pages} pages read by OCR in this turn; more to read.")


# Keeps a page read in this turn: its number, its paragraphs, the seconds it
# took, and the document's number of pages (None when not known).
Keep = Callable[[int, list["Region"], float, int | None], None]


@dataclass
class Turn:
    """One turn of a document's OCR: the pages earlier turns read (by page
    number) and the seconds they spent, the new pages this turn may read
    (``None``: all), and where a page read now is kept."""

    kept: dict[int, list[Region]]
    spent: float
    pages: int | None
    keep: Keep
    read: int = 0
    pages_total: int | None = None


@dataclass
class _Budget:
    models: str
    deadline: float
    pages: int = 0
    models_checked: bool = False
    turn: Turn | None = None


_budget: ContextVar[_Budget | None] = ContextVar("ocr_budget", default=None)


def models_for(language: str | None) -> str:
    """Tesseract's ``-l`` argument for a document's language (``fa``,
    ``ar-EG``, …); ``OCR_LANGUAGES`` when it has none or one without a model."""
    primary = (language or "").split("-")[0].strip().lower()
    return MODELS.get(primary, str(settings.OCR_LANGUAGES))


@contextmanager
def ocr_budget(*, language: str | None = None, turn: Turn | None = None) -> Iterator[None]:
    """The OCR of one document: its models and its page and time budgets
    (what is left of them after earlier turns, with ``turn``)."""
    seconds = settings.OCR_TIMEOUT_SECONDS - (turn.spent if turn is not None else 0.0)
    budget = _Budget(models=models_for(language), deadline=time.monotonic() + seconds, turn=turn)
    token = _budget.set(budget)
    try:
        yield
    finally:
        _budget.reset(token)


def _current() -> _Budget:
    budget = _budget.get()
    if budget is None:  # a page read outside parse_document: a budget of its own
        budget = _Budget(models=models_for(None), deadline=time.monotonic() + settings.OCR_TIMEOUT_SECONDS)
    return budget


def check_image(image: Any) -> None:
    """``file_too_complex`` for an image over ``OCR_MAX_IMAGE_PIXELS``."""
    width, height = image.size
    if width * height > settings.OCR_MAX_IMAGE_PIXELS:
        raise ParseError(
            "file_too_complex",
            f"An image of the document is {width:,} x {height:,} pixels; the limit is "
            f"{settings.OCR_MAX_IMAGE_PIXELS:,} pixels (OCR_MAX_IMAGE_PIXELS).",
        )


def ocr_pages_total(pages: int) -> None:
    """The document has ``pages`` pages (its progress: pages read of these)."""
    turn = _current().turn
    if turn is not None:
        turn.pages_total = pages


def ocr_kept(page: int) -> list[Region] | None:
    """The paragraphs of page ``page`` (1-based) as an earlier turn read
    them, counted as read (:func:`ocr_page`), or ``None``: not read yet."""
    budget = _current()
    if budget.turn is None or page not in budget.turn.kept:
        return None
    return ocr_page(None, page=page)


def ocr_page(image: Any, *, page: int | None = None) -> list[Region]:
    """The paragraphs Tesseract reads on one page image, in reading order.

    Counts the page against ``OCR_MAX_PAGES`` and runs Tesseract with what
    is left of ``OCR_TIMEOUT_SECONDS``. In a turn, page ``page`` (1-based):
    as kept when an earlier turn read it; past the turn's pages,
    :class:`TurnOver`; else read now, and kept.
    """
    budget = _current()
    budget.pages += 1
    if budget.pages > settings.OCR_MAX_PAGES:
        raise ParseError(
            "file_too_complex",
            f"The document has more than {settings.OCR_MAX_PAGES:,} pages to read by OCR "
            "(OCR_MAX_PAGES). Split it into smaller documents.",
        )
    turn = budget.turn if page is not None else None
    if turn is None or page is None:
        return _read(image, budget)
    if page in turn.kept:
        return turn.kept[page]
    if turn.pages is not None and turn.read >= turn.pages:
        raise TurnOver(turn.read)
    started = time.monotonic()
    regions = _read(image, budget)
    turn.read += 1
    turn.keep(page, regions, time.monotonic() - started, turn.pages_total)
    return regions


def _read(image: Any, budget: _Budget) -> list[Region]:
    check_image(image)
    best: tuple[float, Any, dict[str, list[Any]]] | None = None
    for candidate in _scales(image):
        data = _tesseract(candidate, budget)
        read = coverage(candidate, data)
        if best is None or read > best[0]:
            best = (read, candidate, data)
        if read >= MIN_COVERAGE:
            break
    assert best is not None
    _, candidate, data = best
    return regions_of(data, width=candidate.size[0], height=candidate.size[1])


def _scales(image: Any) -> Iterator[Any]:
    """The page at the scale Tesseract reads best, then as it came.

    Tesseract's layout analysis misses whole lines of Arabic-script text
    drawn large (a 12-point Persian page at 300 dpi lost a line in three),
    and at times at the smaller scale too (bench/ocr_quality.py): a page
    whose reading leaves lines of ink without a word is read again at the
    next scale, and the reading that covers most of its lines is kept.
    """
    scaled = scaled_for_ocr(image)
    yield scaled
    if scaled is not image:
        yield image


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


def scaled_for_ocr(image: Any) -> Any:
    """``image`` shrunk so that its lines of text are about LINE_PIXELS
    high, never enlarged nor shrunk below MIN_SCALE: a line's height is the
    median run of rows with ink (the page's projection profile)."""
    import numpy

    rows = _ink_rows(image)
    edges = numpy.flatnonzero(numpy.diff(numpy.concatenate(([0], rows.astype(numpy.int8), [0]))))
    heights = edges[1::2] - edges[0::2]
    if not len(heights):
        return image
    scale = max(MIN_SCALE, min(1.0, LINE_PIXELS / float(numpy.median(heights))))
    if scale > 0.95:
        return image
    from PIL import Image

    size = (max(1, round(image.size[0] * scale)), max(1, round(image.size[1] * scale)))
    return image.resize(size, Image.Resampling.LANCZOS)


def _tesseract(image: Any, budget: _Budget) -> dict[str, list[Any]]:
    left = budget.deadline - time.monotonic()
    if left <= 0:
        raise _timeout()
    parse_left = time_left()
    if parse_left is not None and parse_left < left:
        check_deadline()  # ingest_timeout when it has passed
        left = parse_left
    try:
        import pytesseract
    except ImportError as exc:  # pragma: no cover - a dependency of the project
        raise _unavailable("the pytesseract package is not installed") from exc
    try:
        if not budget.models_checked:
            _check_models(pytesseract, budget.models)
            budget.models_checked = True
        data: dict[str, list[Any]] = pytesseract.image_to_data(
            image, lang=budget.models, output_type=pytesseract.Output.DICT, timeout=left
        )
    except pytesseract.TesseractNotFoundError as exc:
        raise _unavailable("Tesseract is not installed on the server") from exc
    except RuntimeError as exc:  # pytesseract's timeout
        if "timeout" in str(exc).lower():
            raise _timeout() from exc
        raise
    except pytesseract.TesseractError as exc:
        raise ParseError("corrupt_file", "An image of the document could not be read by OCR.") from exc
    return data


def _check_models(pytesseract: Any, models: str) -> None:
    installed = set(pytesseract.get_languages(config=""))
    missing = [model for model in models.split("+") if model not in installed]
    if missing:
        raise _unavailable(f"Tesseract's language data {', '.join(missing)} is not installed")


def _unavailable(reason: str) -> ParseError:
    return ParseError(
        "ocr_unavailable",
        f"The document has pages without a text layer, to be read by OCR, but {reason} "
        f"({INSTALL_HINT}; docs/ocr.md). Reingest it once OCR is installed.",
    )


def _timeout() -> ParseError:
    return ParseError(
        "ingest_timeout",
        f"Reading the document by OCR took longer than {settings.OCR_TIMEOUT_SECONDS:g} seconds "
        "(OCR_TIMEOUT_SECONDS). Split it into smaller documents.",
    )


def regions_of(data: dict[str, list[Any]], *, width: int, height: int) -> list[Region]:
    """Tesseract's words grouped into paragraphs (lines joined by a newline),
    in the order Tesseract read them, each with the box around its words."""
    paragraphs: dict[tuple[int, int, int], list[tuple[int, str, Box]]] = {}
    for i, word in enumerate(data["text"]):
        if not str(word).strip():
            continue
        key = (int(data["page_num"][i]), int(data["block_num"][i]), int(data["par_num"][i]))
        x, y = int(data["left"][i]), int(data["top"][i])
        box = (
            x / width,
            y / height,
            (x + int(data["width"][i])) / width,
            (y + int(data["height"][i])) / height,
        )
        paragraphs.setdefault(key, []).append((int(data["line_num"][i]), str(word).strip(), box))
    return [_region(words) for words in paragraphs.values()]


def _region(words: list[tuple[int, str, Box]]) -> Region:
    lines: dict[int, list[str]] = {}
    for line, word, _ in words:
        lines.setdefault(line, []).append(word)
    text = "\n".join(" ".join(line_words) for line_words in lines.values())
    return Region(text=text, bbox=union_box([box for _, _, box in words]))
