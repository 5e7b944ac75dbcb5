"""OCR in turns (docs/ocr.md, "In turns"): what one ingestion attempt of a
document's OCR may read, and how it ends (:class:`TurnOver`), so that a long
scan holds its worker from other organizations' documents for a few
seconds at most (resources/ingestion/turns.py keeps what a turn read)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from resources.parsing.base import ParseError

if TYPE_CHECKING:
    from resources.parsing.ocr_regions import Region
    from resources.parsing.ocr_tables import Table

# A turn ends before a step (a page's text, a table) that would hold its
# worker past this many seconds, judged by its last step: a page with a
# table takes several times a page of text (its cells read apart, by two
# models), so a turn may end between two tables of a page.
TURN_SECONDS = 8.0


class TurnOver(ParseError):
    """The turn has read its pages: the document goes back to the queue,
    its pages kept, to be continued by another attempt (not a failure)."""

    def __init__(self, pages: int):
        super().__init__("ocr_turn_over", f"{pages} pages read by OCR in this turn; more to read.")


# Keeps a page read in this turn: its number, its paragraphs, the seconds it
# took, and the document's number of pages (None when not known).
Keep = Callable[[int, list["Region"], float, int | None], None]
# Keeps the tables read so far of a page the turn ended in: its number, a
# table (or None: a grid read as no table) per grid in order, the seconds.
KeepPart = Callable[[int, list["Table | None"], float], None]


@dataclass
class Turn:
    """One turn of a document's OCR: the pages earlier turns read (by page
    number) and the seconds they spent, the new pages this turn may read
    (``None``: all), and where a page read now is kept; ``parts``, the
    tables earlier turns read of a page they ended in, and where such
    tables are kept (a page of tables takes longer than a turn)."""

    kept: dict[int, list[Region]]
    spent: float
    pages: int | None
    keep: Keep
    read: int = 0
    pages_total: int | None = None
    seconds: float = 0.0  # spent reading this turn's pages
    parts: dict[int, list[Table | None]] = field(default_factory=dict)
    keep_part: KeepPart | None = None
    began: float | None = None  # when this turn's first step began
    steps: int = 0  # pages' texts and tables read in this turn
    step_began: float = 0.0
    last_step: float = 0.0  # the seconds the last step took

    def over(self) -> bool:
        """The turn has read its pages, or is due to end (:meth:`due`)."""
        if self.pages is None:
            return False
        return self.read >= self.pages or self.due()

    def due(self) -> bool:
        """The turn has read something, and another step as long as the
        last would hold its worker past TURN_SECONDS: it ends before its
        next step (a page's text, or a table of a page)."""
        if self.pages is None or self.began is None or self.steps == 0:
            return False
        return time.monotonic() - self.began + self.last_step >= TURN_SECONDS

    def step(self) -> None:
        """A step begins (:meth:`stepped` when it is done)."""
        self.step_began = time.monotonic()
        if self.began is None:
            self.began = self.step_began

    def stepped(self) -> None:
        self.steps += 1
        self.last_step = time.monotonic() - self.step_began
