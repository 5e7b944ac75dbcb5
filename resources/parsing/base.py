"""What every format parser produces, and the errors that end an ingestion."""

from __future__ import annotations

import bisect
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

_SPACES = re.compile(r"[ \t\f\v\u00a0\u200b]+")
_MANY_NEWLINES = re.compile(r"\n{2,}")
_BLOCK = re.compile(r"[^\n]+(?:\n[^\n]+)*")
Box = tuple[float, float, float, float]
# (monotonic deadline, the timeout in seconds) of the parse in progress.
_deadline: ContextVar[tuple[float, float] | None] = ContextVar("parse_deadline", default=None)


class ParseError(Exception):
    """The document itself cannot be ingested; retrying would not help.

    ``code`` is stored on the resource and shown in its ``error`` object.
    """

    def __init__(self, code: str, message: str):
        self.code = code
        self.message = message
        super().__init__(f"{code}: {message}")


# What a parser's catch-all for a library's errors must let through: its own
# errors, and the task's soft time limit (raised wherever the parse is).
PASS_THROUGH: tuple[type[BaseException], ...] = (ParseError, SoftTimeLimitExceeded)


@contextmanager
def parse_deadline(seconds: float) -> Iterator[None]:
    """Let :func:`check_deadline` end the parse inside once ``seconds`` have passed."""
    token = _deadline.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _deadline.reset(token)


def check_deadline() -> None:
    """``ingest_timeout`` once the parse in progress is past its deadline.

    Parsers call it at every step (a text block, a page, a PDF operator): the
    bound holds on any worker pool, wherever the parse is slow in Python.
    Code stuck in C is bounded by the task's time limits (resources/tasks.py).
    """
    current = _deadline.get()
    if current is not None and time.monotonic() > current[0]:
        raise ParseError(
            "ingest_timeout",
            f"Parsing the document took longer than {current[1]:g} seconds "
            "(INGEST_PARSE_TIMEOUT_SECONDS). Split it into smaller documents.",
        )


def time_left() -> float | None:
    """Seconds left before the parse in progress is past its deadline."""
    current = _deadline.get()
    return None if current is None else current[0] - time.monotonic()


@dataclass(frozen=True)
class ParsedDocument:
    """The extracted plain text of a document.

    ``text`` is made of blocks (paragraphs, headings, table rows, list items)
    separated by a blank line. Passage offsets (``char_start``/``char_end``)
    index into it. ``headings`` holds the offsets where heading blocks start;
    ``pages`` the offsets where pages start, with their 1-based numbers;
    ``regions`` the blocks whose place on their page is known (read by
    OCR): start and end offsets, and the box (page-relative 0 to 1, ``x0, y0,
    x1, y1``, origin top left).
    """

    text: str
    headings: frozenset[int] = frozenset()
    pages: tuple[tuple[int, int], ...] = ()
    regions: tuple[tuple[int, int, Box], ...] = ()

    @cached_property
    def _page_starts(self) -> list[int]:
        return [start for start, _ in self.pages]

    def page_at(self, offset: int) -> int | None:
        """The page on which ``offset`` lies (``None`` for formats without pages)."""
        if not self.pages:
            return None
        index = bisect.bisect_right(self._page_starts, offset) - 1
        return self.pages[max(index, 0)][1]

    def bbox_of(self, start: int, end: int) -> Box | None:
        """The box around the text from ``start`` to ``end``, on the page where
        it starts: ``None`` unless every block of it on that page has one."""
        page = self.page_at(start)
        boxes = [box for s, e, box in self.regions if s < end and e > start and self.page_at(s) == page]
        if not boxes:
            return None
        blocks = [b for b in _BLOCK.finditer(self.text, start, end) if self.page_at(b.start()) == page]
        if len(boxes) < len(blocks):
            return None
        return union_box(boxes)


@dataclass
class DocumentBuilder:
    """Accumulates blocks into a :class:`ParsedDocument`.

    Stops with ``text_too_long`` as soon as the text passes
    MAX_EXTRACTED_CHARS, so a huge document never sits whole in memory twice.
    """

    max_chars: int = field(default_factory=lambda: int(settings.MAX_EXTRACTED_CHARS))
    _parts: list[str] = field(default_factory=list)
    _length: int = 0
    _headings: set[int] = field(default_factory=set)
    _pages: list[tuple[int, int]] = field(default_factory=list)
    _pending_page: int | None = None
    _regions: list[tuple[int, int, Box]] = field(default_factory=list)
    _tables: int = 0
    # The table the last block belongs to (its name, header and last row's
    # number), while no other block has come after it.
    open_table: tuple[str, list[str], int] | None = None

    def table_name(self, caption: str) -> str:
        """A table's name: its caption, else ``Table N``, N counting the
        document's tables (of every page and kind)."""
        self._tables += 1
        return caption or f"Table {self._tables}"

    def at_page_start(self) -> bool:
        """No block yet on the page started last."""
        return self._pending_page is not None and bool(self._parts)

    def start_page(self, number: int) -> None:
        # Recorded at the next block, so that empty pages take no offset.
        self._pending_page = number

    def add(self, text: str, *, heading: bool = False, bbox: Box | None = None) -> None:
        check_deadline()
        block = normalise_block(text)
        if not block:
            return
        self.open_table = None
        if self._parts:
            self._parts.append("\n\n")
            self._length += 2
        if self._pending_page is not None:
            self._pages.append((self._length, self._pending_page))
            self._pending_page = None
        if heading:
            self._headings.add(self._length)
        self._parts.append(block)
        if bbox is not None:
            self._regions.append((self._length, self._length + len(block), bbox))
        self._length += len(block)
        if self._length > self.max_chars:
            raise ParseError(
                "text_too_long",
                f"The document has more than {self.max_chars:,} characters of text "
                "(MAX_EXTRACTED_CHARS). Split it into smaller documents.",
            )

    def build(self) -> ParsedDocument:
        text = "".join(self._parts)
        if not text.strip():
            raise ParseError("empty_document", "The document contains no extractable text.")
        return ParsedDocument(
            text=text,
            headings=frozenset(self._headings),
            pages=tuple(self._pages),
            regions=tuple(self._regions),
        )


def union_box(boxes: list[Box]) -> Box:
    """The smallest box holding ``boxes``, rounded to 4 decimals."""
    return (
        round(min(b[0] for b in boxes), 4),
        round(min(b[1] for b in boxes), 4),
        round(max(b[2] for b in boxes), 4),
        round(max(b[3] for b in boxes), 4),
    )


def normalise_block(text: str) -> str:
    """Collapse runs of spaces, trim lines, and keep at most single newlines."""
    lines = [
        _SPACES.sub(" ", line).strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    ]
    return _MANY_NEWLINES.sub("\n", "\n".join(lines)).strip()
