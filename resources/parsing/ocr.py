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
few pages (fewer where more would hold its worker past TURN_SECONDS), keeps them, and
ends with :class:`TurnOver` at the next page it would read, or between two
tables of a page of tables, the tables read kept; the next attempt reads
what was kept instead of running Tesseract again, and the budgets count
the pages and seconds of every turn.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from resources.parsing.base import ParseError, check_deadline, time_left
from resources.parsing.ocr_clean import despeckled, evenly_lit
from resources.parsing.ocr_regions import Region, regions_of, with_tables
from resources.parsing.ocr_scale import CELL_LINE_PIXELS, MIN_COVERAGE, coverage, scaled_for_ocr
from resources.parsing.ocr_tables import (
    CELLS_ALONE,
    Grid,
    Strip,
    Table,
    erased,
    find_grids,
    line_read,
    strips,
    table_of,
)
from resources.parsing.ocr_turn import Turn, TurnOver

# Tesseract's trained models of the languages the service speaks (BCP 47
# primary subtag -> model name).
MODELS = {"en": "eng", "fa": "fas", "ar": "ara"}
# Tesseract's OpenMP threads. Left to itself Tesseract 5 runs as many as
# there are cores and spins them: on two shared cores a 40-row Persian table
# page took 19 s so, 3.9 s on one thread (bench/ocr_quality.py reads text
# pages several times faster too).
TESSERACT_THREADS = "1"
INSTALL_HINT = "apt-get install tesseract-ocr tesseract-ocr-fas tesseract-ocr-ara"


@dataclass
class _Budget:
    models: str
    deadline: float
    pages: int = 0
    models_checked: bool = False
    turn: Turn | None = None
    installed: frozenset[str] = frozenset()  # Tesseract's models, once checked

    def latin(self) -> list[str]:
        """English's model, where the document's are others and it is installed."""
        return ["eng"] if "eng" not in self.models.split("+") and "eng" in self.installed else []


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
    if turn.over():
        raise TurnOver(turn.read)
    started = time.monotonic()
    regions = _read(image, budget, page=page)
    seconds = time.monotonic() - started
    turn.read += 1
    turn.seconds += seconds
    turn.keep(page, regions, seconds, turn.pages_total)
    return regions


def _read(image: Any, budget: _Budget, *, page: int | None = None) -> list[Region]:
    """The page's paragraphs and its ruled tables (docs/ocr.md, "Tables"):
    the page read without the tables' rules, each table's cells read apart.

    In a turn (page ``page``), each table and the page's text are a step:
    a turn due to end hands the page back between two steps, the tables
    read so far kept for the next turn (:meth:`Turn.due`)."""
    check_image(image)
    image = despeckled(evenly_lit(image))
    started = time.monotonic()
    turn = budget.turn if page is not None else None
    grids = find_grids(image)
    read: list[Table | None] = []
    if grids:
        # Rules erased, the tables kept: a page of noise with its tables
        # blanked out leaves Tesseract's binarisation nothing to split.
        image = erased(image, grids)
        done = turn.parts.get(page, []) if turn is not None and page is not None else []
        read = list(done) if len(done) <= len(grids) else []
        for grid in grids[len(read) :]:
            _step(turn, page, read, started)
            read.append(_table(image, grid, budget))
            if turn is not None:
                turn.stepped()
    _step(turn, page, read, started)
    tables = [table for table in read if table is not None]
    best: tuple[float, Any, dict[str, list[Any]]] | None = None
    for candidate in _scales(image):
        data = _tesseract(candidate, budget)
        covered = coverage(candidate, data)
        if best is None or covered > best[0]:
            best = (covered, candidate, data)
        if covered >= MIN_COVERAGE:
            break
    assert best is not None
    _, candidate, data = best
    if turn is not None:
        turn.stepped()
    paragraphs = regions_of(data, width=candidate.size[0], height=candidate.size[1], tables=tables)
    return with_tables(paragraphs, tables)


def _step(turn: Turn | None, page: int | None, read: list[Table | None], started: float) -> None:
    """Before a step of page ``page``: a turn due to end keeps the tables
    ``read`` of the page and ends (:class:`TurnOver`)."""
    if turn is None or page is None:
        return
    if turn.due():
        if read and turn.keep_part is not None:
            turn.keep_part(page, read, time.monotonic() - started)
        raise TurnOver(turn.read)
    turn.step()


def _table(image: Any, grid: Grid, budget: _Budget) -> Table | None:
    """The grid's table (``image``: the page without its rules), its cells
    read as strips of lines by the document's models and by English's
    (codes, numbers and names in Latin letters fill the tables of every
    language), each cell as the reading with the higher mean confidence;
    a cell no reading of its strip holds is read alone, as one line (as a
    raw line where the document's models find none)."""
    read: dict[int, tuple[str, float]] = {}
    missed: list[tuple[Strip, int]] = []
    for strip in strips(image, grid):
        scaled = scaled_for_ocr(strip.image, line=CELL_LINE_PIXELS)
        scale = strip.image.size[1] / scaled.size[1]
        readings = [_tesseract(scaled, budget, psm=6)]  # checks the models first
        readings += [_tesseract(scaled, budget, psm=6, models=models) for models in budget.latin()]
        for data in readings:
            _better(read, strip.read(data, scale=scale))
        missed += [(strip, cell) for _, _, cell in strip.placed if cell not in read]
    for strip, cell in missed[:CELLS_ALONE]:
        alone = strip.alone(cell)
        for psm in (7, 13):  # one line; as a raw line, where the line finder finds none
            if line := line_read(_tesseract(alone, budget, psm=psm)):
                _better(read, {cell: line})
                break
        for models in budget.latin():
            if line := line_read(_tesseract(alone, budget, psm=7, models=models)):
                _better(read, {cell: line})
    texts = [read[cell][0] if cell in read else "" for cell in range(len(grid.boxes))]
    return table_of(grid, texts, width=image.size[0], height=image.size[1])


def _better(read: dict[int, tuple[str, float]], other: dict[int, tuple[str, float]]) -> None:
    for cell, (text, confidence) in other.items():
        if cell not in read or confidence > read[cell][1]:
            read[cell] = (text, confidence)


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


def _tesseract(
    image: Any, budget: _Budget, *, psm: int | None = None, models: str | None = None
) -> dict[str, list[Any]]:
    """Tesseract's words on ``image`` with their boxes; ``psm``: its page
    segmentation mode where not a page's (6: one block of lines, a table's
    strip of cells; 7: one line); ``models``: other models than the document's."""
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
    pytesseract.pytesseract.environ = _ENVIRON  # Tesseract's own threads: TESSERACT_THREADS
    try:
        if not budget.models_checked:
            budget.installed = _check_models(pytesseract, budget.models)
            budget.models_checked = True
        data: dict[str, list[Any]] = pytesseract.image_to_data(
            image,
            lang=models or budget.models,
            config=f"--psm {psm}" if psm else "",
            output_type=pytesseract.Output.DICT,
            timeout=left,
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


class _TesseractEnviron(Mapping[str, str]):
    """The environment Tesseract runs in: this process's, with
    ``OMP_THREAD_LIMIT`` at TESSERACT_THREADS unless the server's own
    environment sets it (only Tesseract's: other OpenMP libraries in this
    process, torch's, keep their threads)."""

    def _environ(self) -> dict[str, str]:
        return {"OMP_THREAD_LIMIT": TESSERACT_THREADS, **os.environ}

    def __getitem__(self, key: str) -> str:
        return self._environ()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._environ())

    def __len__(self) -> int:
        return len(self._environ())


_ENVIRON = _TesseractEnviron()


def _check_models(pytesseract: Any, models: str) -> frozenset[str]:
    """The models installed; ``ocr_unavailable`` when one of ``models`` is not."""
    installed = frozenset(pytesseract.get_languages(config=""))
    missing = [model for model in models.split("+") if model not in installed]
    if missing:
        raise _unavailable(f"Tesseract's language data {', '.join(missing)} is not installed")
    return installed


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
