"""A right-to-left PDF page's text in logical (reading) order.

A PDF draws a line's text left to right as it looks, not in the order it
is read: in a Persian line the last words are drawn first, and a number or
an English word inside it is drawn between the runs around it. The
pieces of :func:`resources.parsing.pdf_glyphs.page_pieces` go back into
reading order here:

1. Lines: consecutive pieces on the same baseline (within half the font's
   height) make a line; lines keep the order the page draws them in.
2. Runs: a line's text objects (``BT`` … ``ET``) sorted left to right by
   where they start, each one's pieces kept in drawing order; a run is a
   text object's stretch inside ``/ReversedChars`` (its characters reversed
   back into reading order) or outside it. A run's kind: right to left
   (reversed, or right-to-left letters only: one glyph needs no mark), left
   to right (Latin letters), a number (digits of any script) or
   punctuation and spaces only.
3. Order: the runs' bidi embedding levels are set from the line's
   direction (in a right-to-left line right-to-left runs 1, the others 2;
   in a left-to-right one 1 and 0, a number after right-to-left letters 2;
   punctuation as its neighbours, see :func:`_set_levels`), and rule L2 of
   the Unicode Bidirectional Algorithm (UAX #9) is applied to them.
   Applied to runs in visual order with their levels, it gives back the
   reading order (L2 reverses contiguous sequences level by level; it is
   its own inverse).

A line's direction is that of its first strong character once in reading
order (UAX #9, P2). When the line reads consistently both ways (a
right-to-left line ending in an English word looks like a left-to-right
line beginning with one) or neither, the direction of most of the page's
runs decides.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from resources.parsing.pdf_glyphs import Piece

_RIGHT_TO_LEFT = frozenset({"R", "AL"})
# Arabic presentation forms (shaped letters, ligatures) back to letters.
_PRESENTATION_FORMS = str.maketrans(
    {
        code: unicodedata.normalize("NFKC", chr(code))
        for ranges in ((0xFB1D, 0xFDFF), (0xFE70, 0xFEFC))
        for code in range(ranges[0], ranges[1] + 1)
        if unicodedata.normalize("NFKC", chr(code)) != chr(code)
    }
)


@dataclass
class _Run:
    """A run of a line in reading order; ``kind`` is ``"R"`` (right to left:
    reversed, or holding only right-to-left letters), ``"L"`` (left-to-right
    letters), ``"N"`` (a number) or ``"O"`` (spaces and punctuation only)."""

    text: str
    reversed: bool
    kind: str = "O"
    level: int = 0


def fold_presentation_forms(text: str) -> str:
    """Arabic and Hebrew presentation forms (U+FB1D to U+FDFF, U+FE70 to U+FEFC)
    as the letters they shape (their NFKC decomposition)."""
    return text.translate(_PRESENTATION_FORMS)


def logical_text(pieces: list[Piece]) -> str:
    """The pieces' text in reading order, one line per line of the page."""
    lines = [_runs(line) for line in _lines(pieces)]
    strong = [_strong(run.text) for line in lines for run in line]
    page_right_to_left = sum(s == "R" for s in strong) > sum(s == "L" for s in strong)
    return "\n".join(_reading_order(line, page_right_to_left) for line in lines)


def _lines(pieces: list[Piece]) -> Iterator[list[Piece]]:
    line: list[Piece] = []
    for piece in pieces:
        if line and abs(piece.y - line[0].y) > max(line[0].size, piece.size) / 2:
            yield line
            line = []
        line.append(piece)
    if line:
        yield line


def _runs(line: list[Piece]) -> list[_Run]:
    """The line's runs, left to right, each in reading order."""
    runs: list[_Run] = []
    clusters: list[str] = []
    previous: Piece | None = None
    for piece in _visual_order(line):
        if previous and (piece.reversed, piece.text_object) != (previous.reversed, previous.text_object):
            _close(runs[-1], clusters)
            clusters = []
        if not clusters:
            runs.append(_Run("", piece.reversed))
        clusters.extend(piece.clusters)
        previous = piece
    if runs:
        _close(runs[-1], clusters)
    return runs


def _visual_order(line: list[Piece]) -> list[Piece]:
    """The line's pieces left to right: its text objects (``BT`` … ``ET``)
    by where they start, each one's pieces in the order it draws them
    (within a text object the pen only moves on, and a glyph moved by an
    offset, such as a mark above a letter, stays where it is drawn)."""
    starts: dict[int, float] = {}
    for piece in line:
        starts.setdefault(piece.text_object, piece.x)
    order = {id(piece): index for index, piece in enumerate(line)}
    return sorted(line, key=lambda piece: (starts[piece.text_object], order[id(piece)]))


def _close(run: _Run, clusters: list[str]) -> None:
    run.text = "".join(reversed(clusters) if run.reversed else clusters)
    kinds = {unicodedata.bidirectional(char) for char in run.text}
    if run.reversed or (kinds & _RIGHT_TO_LEFT and "L" not in kinds):
        # A right-to-left run of one glyph (a letter) is drawn without
        # /ReversedChars: there is nothing in it to reverse.
        run.kind = "R"
    elif "L" in kinds:
        run.kind = "L"
    elif kinds & {"EN", "AN"}:
        run.kind = "N"


def _reading_order(runs: list[_Run], page_right_to_left: bool) -> str:
    if not any(run.kind == "R" for run in runs):
        return "".join(run.text for run in runs)
    as_right_to_left = _reorder(runs, right_to_left=True)
    as_left_to_right = _reorder(runs, right_to_left=False)
    consistent_rtl = _strong(as_right_to_left) == "R"
    consistent_ltr = _strong(as_left_to_right) == "L"
    if consistent_rtl != consistent_ltr:
        return as_right_to_left if consistent_rtl else as_left_to_right
    return as_right_to_left if page_right_to_left else as_left_to_right


def _reorder(runs: list[_Run], *, right_to_left: bool) -> str:
    """Rule L2 on the runs (in visual order) at the levels a line of that
    direction gives them."""
    _set_levels(runs, right_to_left=right_to_left)
    order = list(runs)
    for level in range(max(run.level for run in order), 0, -1):
        index = 0
        while index < len(order):
            if order[index].level < level:
                index += 1
                continue
            end = index
            while end < len(order) and order[end].level >= level:
                end += 1
            order[index:end] = reversed(order[index:end])
            index = end
    return "".join(run.text for run in order)


def _set_levels(runs: list[_Run], *, right_to_left: bool) -> None:
    """Each run's embedding level, after UAX #9's rules W7 (a number after
    left-to-right letters is left to right), N1/N2 (punctuation between two
    runs of one direction takes it, else the line's) and I1/I2."""
    base = "R" if right_to_left else "L"
    for run in runs:
        if run.kind == "R":
            run.level = 1
        elif run.kind == "L":
            run.level = 2 if right_to_left else 0
    for index, run in enumerate(runs):
        if run.kind == "N":
            sides = _neighbours(runs, index, base)
            if right_to_left:
                run.level = 2
            else:  # after right-to-left letters a number stays one (level 2)
                run.level = 2 if "R" in sides and "L" not in sides else 0
    for index, run in enumerate(runs):
        if run.kind == "O":
            sides = {_direction(runs, side, base) for side in _neighbour_indexes(runs, index)}
            side = sides.pop() if len(sides) == 1 else base
            run.level = (2 if right_to_left else 0) if side == "L" else 1


def _neighbour_indexes(runs: list[_Run], index: int) -> tuple[int | None, int | None]:
    """The nearest runs left and right of ``runs[index]`` that are not
    punctuation only (``None`` at the line's edge)."""
    left = next((i for i in range(index - 1, -1, -1) if runs[i].kind != "O"), None)
    right = next((i for i in range(index + 1, len(runs)) if runs[i].kind != "O"), None)
    return left, right


def _neighbours(runs: list[_Run], index: int, base: str) -> set[str]:
    return {runs[i].kind if i is not None else base for i in _neighbour_indexes(runs, index)}


def _direction(runs: list[_Run], index: int | None, base: str) -> str:
    """The direction a neighbour gives punctuation beside it (the line's at
    its edge; a number's is its level's)."""
    if index is None:
        return base
    run = runs[index]
    if run.kind == "N":
        return "L" if run.level % 2 == 0 and (base == "L" or _neighbours(runs, index, base) & {"L"}) else "R"
    return run.kind


def _strong(text: str) -> str | None:
    """``"R"`` or ``"L"``: the direction of the first strong character."""
    for char in text:
        kind = unicodedata.bidirectional(char)
        if kind in _RIGHT_TO_LEFT:
            return "R"
        if kind == "L":
            return "L"
    return None
