"""A PDF page's shown text as positioned pieces, for right-to-left pages.

pypdf's text extraction ignores two marks that say how a page's glyphs
read: ``/ActualText`` (the characters a glyph or a group of glyphs stands
for: a shaped Arabic letter, a ligature, a zero-width non-joiner drawn as
an empty glyph) and ``/ReversedChars`` (a run whose glyphs are written in
visual order, right to left; PDF 32000-1, 14.9.4 and 14.8.2.5.3).
Chromium's print-to-PDF (Skia) writes both for every right-to-left run.

:func:`page_pieces` walks the page's content stream itself: each text
operator becomes a :class:`Piece` with its position on the page and its
characters, decoded with the font's ``/ToUnicode`` map and replaced by the
``/ActualText`` that covers them. It raises :class:`Unreadable` where it
cannot decode faithfully (a font without ``/ToUnicode``, a composite font
with another encoding than Identity-H, rotated text, text inside a form
XObject); the
caller then keeps pypdf's text.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any

from resources.parsing.base import check_deadline

Matrix = tuple[float, float, float, float, float, float]
_IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
_CMAP_TOKEN = re.compile(rb"<([0-9A-Fa-f\s]*)>|(\[)|(\])|(begin|end)(bfchar|bfrange)")
# A TJ adjustment past this many thousandths of an em is a word gap.
_TJ_GAP = 200


class Unreadable(Exception):
    """The page uses something this reader does not decode."""


@dataclass
class Piece:
    """Characters shown from one position: ``clusters`` in the order they
    were drawn (an ``/ActualText`` is one cluster, never split), ``reversed``
    inside ``/ReversedChars``; ``x``/``y`` on the page, ``size`` the
    font's height there."""

    clusters: list[str]
    reversed: bool
    x: float
    y: float
    size: float
    text_object: int


def _mult(m: Matrix, n: Matrix) -> Matrix:
    a, b, c, d, e, f = m
    a2, b2, c2, d2, e2, f2 = n
    return (
        a * a2 + b * c2,
        a * b2 + b * d2,
        c * a2 + d * c2,
        c * b2 + d * d2,
        e * a2 + f * c2 + e2,
        e * b2 + f * d2 + f2,
    )


def _numbers(operands: list[Any], count: int) -> tuple[float, ...]:
    if len(operands) < count or not all(isinstance(x, (int, float)) for x in operands[:count]):
        raise Unreadable("an operator with non-numeric operands")
    return tuple(float(x) for x in operands[:count])


def _matrix(operands: list[Any]) -> Matrix:
    a, b, c, d, e, f = _numbers(operands, 6)
    return (a, b, c, d, e, f)


class _Font:
    """Decodes a font's character codes through its ``/ToUnicode`` map."""

    def __init__(self, font: Any):
        subtype = font.get("/Subtype")
        if subtype == "/Type0":
            if font.get("/Encoding") != "/Identity-H":  # not vertical, nor a predefined CMap
                raise Unreadable("a composite font with another encoding than Identity-H")
            self.width = 2
        else:
            self.width = 1
        if "/ToUnicode" not in font:
            raise Unreadable("a font without /ToUnicode")
        self.single: dict[int, str] = {}
        self.ranges: list[tuple[int, int, bytes | list[bytes]]] = []
        self._read(font["/ToUnicode"].get_object().get_data())
        self.ranges.sort(key=lambda item: item[0])
        self._starts = [low for low, _, _ in self.ranges]

    def _read(self, data: bytes) -> None:
        section = b""
        pending: list[bytes | list[bytes]] = []
        array: list[bytes] | None = None
        for number, match in enumerate(_CMAP_TOKEN.finditer(data)):
            if number % 10_000 == 0:
                check_deadline()
            hexa, opening, closing, edge, kind = match.groups()
            if edge is not None:
                section = kind if edge == b"begin" else b""
                pending = []
            elif opening is not None:
                array = []
            elif closing is not None and array is not None:
                pending.append(array)
                array = None
                self._take(section, pending)
            elif hexa is not None and section:
                value = bytes.fromhex(hexa.decode("ascii"))  # skips whitespace
                if array is not None:
                    array.append(value)
                    continue
                pending.append(value)
                self._take(section, pending)

    def _take(self, section: bytes, pending: list[bytes | list[bytes]]) -> None:
        if section == b"bfchar" and len(pending) == 2:
            source, target = pending
            if isinstance(source, bytes) and isinstance(target, bytes):
                self.single[int.from_bytes(source, "big")] = _utf16(target)
            pending.clear()
        elif section == b"bfrange" and len(pending) == 3:
            low, high, target = pending
            if isinstance(low, bytes) and isinstance(high, bytes):
                self.ranges.append((int.from_bytes(low, "big"), int.from_bytes(high, "big"), target))
            pending.clear()

    def decode(self, data: bytes) -> list[str]:
        """One string per character code (a glyph may stand for several characters)."""
        out = []
        for start in range(0, len(data) - self.width + 1, self.width):
            out.append(self._char(int.from_bytes(data[start : start + self.width], "big")))
        return out

    def _char(self, code: int) -> str:
        if code in self.single:
            return self.single[code]
        index = bisect.bisect_right(self._starts, code) - 1
        if index >= 0:
            low, high, target = self.ranges[index]
            if code <= high:
                if isinstance(target, list):
                    return _utf16(target[code - low]) if code - low < len(target) else ""
                value = int.from_bytes(target, "big") + code - low
                return _utf16(value.to_bytes(len(target), "big"))
        return ""


def _utf16(data: bytes) -> str:
    return data.decode("utf-16-be", "replace")


@dataclass
class _Marked:
    """One open marked-content sequence."""

    reversed: bool
    actual: str | None = None
    shown: bool = False  # whether text was shown inside it


@dataclass
class _State:
    ctm: Matrix = _IDENTITY
    tm: Matrix = _IDENTITY
    tlm: Matrix = _IDENTITY
    leading: float = 0.0
    font: _Font | None = None
    size: float = 0.0
    saved: list[tuple[Matrix, _Font | None, float, float]] = field(default_factory=list)
    marks: list[_Marked] = field(default_factory=list)
    # Set by a positioning operator; cleared once text is shown from there.
    moved: bool = True
    text_objects: int = 0


class _Walker:
    """Turns a content stream's operators into :class:`Piece` objects."""

    def __init__(self, resources: Any):
        self.resources = resources
        self.fonts: dict[str, _Font] = {}
        self.state = _State()
        self.pieces: list[Piece] = []

    def walk(self, operations: list[tuple[list[Any], bytes]]) -> list[Piece]:
        for operands, operator in operations:
            check_deadline()
            handler = _HANDLERS.get(operator)
            if handler is not None:
                handler(self, operands)
        return self.pieces

    # Graphics and text state.
    def save(self, operands: list[Any]) -> None:
        s = self.state
        s.saved.append((s.ctm, s.font, s.size, s.leading))

    def restore(self, operands: list[Any]) -> None:
        s = self.state
        if s.saved:
            s.ctm, s.font, s.size, s.leading = s.saved.pop()

    def concat(self, operands: list[Any]) -> None:
        self.state.ctm = _mult(_matrix(operands), self.state.ctm)

    def begin_text(self, operands: list[Any]) -> None:
        self.state.tm = self.state.tlm = _IDENTITY
        self.state.moved = True
        self.state.text_objects += 1

    def set_font(self, operands: list[Any]) -> None:
        if len(operands) < 2:
            raise Unreadable("Tf without a font and size")
        name = str(operands[0])
        if name not in self.fonts:
            try:
                font = self.resources["/Font"][name].get_object()
            except (KeyError, TypeError) as exc:
                raise Unreadable(f"font {name} is not in the resources") from exc
            self.fonts[name] = _Font(font)
        self.state.font = self.fonts[name]
        self.state.size = _numbers(operands[1:], 1)[0]

    def set_leading(self, operands: list[Any]) -> None:
        self.state.leading = _numbers(operands, 1)[0]

    def move(self, operands: list[Any]) -> None:
        tx, ty = _numbers(operands, 2)
        self.state.tm = self.state.tlm = _mult((1.0, 0.0, 0.0, 1.0, tx, ty), self.state.tlm)
        self.state.moved = True

    def move_leading(self, operands: list[Any]) -> None:
        self.state.leading = -_numbers(operands, 2)[1]
        self.move(operands)

    def set_matrix(self, operands: list[Any]) -> None:
        self.state.tm = self.state.tlm = _matrix(operands)
        self.state.moved = True

    def next_line(self, operands: list[Any]) -> None:
        self.move([0, -self.state.leading])

    # Text.
    def show(self, operands: list[Any]) -> None:
        if operands:
            self._show(operands[0])

    def show_array(self, operands: list[Any]) -> None:
        if not operands or not isinstance(operands[0], list):
            raise Unreadable("TJ without an array")
        for item in operands[0]:
            if isinstance(item, (int, float)):
                if -float(item) > _TJ_GAP:
                    self._add([" "])
            else:
                self._show(item)

    def show_next_line(self, operands: list[Any]) -> None:
        self.next_line([])
        self.show(operands[-1:])

    def _show(self, string: Any) -> None:
        font = self.state.font
        if font is None:
            raise Unreadable("text shown before any Tf")
        data = string.original_bytes if hasattr(string, "original_bytes") else bytes(string)
        self._add(font.decode(data))

    def _add(self, clusters: list[str]) -> None:
        s = self.state
        moved, s.moved = s.moved, False
        actual = next((mark for mark in reversed(s.marks) if mark.actual is not None), None)
        if actual is not None:
            if actual.shown:  # the rest of the glyphs it stands for
                return
            actual.shown = True
            clusters = [actual.actual or ""]
        reversed_run = any(mark.reversed for mark in s.marks)
        if moved or not self.pieces:
            _, b, c, d, x, y = _mult(s.tm, s.ctm)
            if abs(b) > 1e-6 or abs(c) > 1e-6:
                raise Unreadable("rotated or skewed text")
            size = abs(s.size * d)
        else:  # drawn on from where the last piece ended, on its line
            last = self.pieces[-1]
            x, y, size = last.x, last.y, last.size
        self.pieces.append(Piece(clusters, reversed_run, x, y, size, s.text_objects))

    # Marked content.
    def begin_marked(self, operands: list[Any]) -> None:
        tag = str(operands[0]) if operands else ""
        self.state.marks.append(_Marked(reversed=tag == "/ReversedChars"))

    def begin_marked_properties(self, operands: list[Any]) -> None:
        self.begin_marked(operands)
        properties: Any = operands[1] if len(operands) > 1 else None
        if isinstance(properties, str):  # a name in the resources' /Properties
            try:
                properties = self.resources["/Properties"][properties].get_object()
            except (KeyError, TypeError):
                properties = None
        if hasattr(properties, "get") and "/ActualText" in properties:
            self.state.marks[-1].actual = str(properties["/ActualText"])

    def end_marked(self, operands: list[Any]) -> None:
        if self.state.marks:
            self.state.marks.pop()


_HANDLERS = {
    b"q": _Walker.save,
    b"Q": _Walker.restore,
    b"cm": _Walker.concat,
    b"BT": _Walker.begin_text,
    b"Tf": _Walker.set_font,
    b"TL": _Walker.set_leading,
    b"Td": _Walker.move,
    b"TD": _Walker.move_leading,
    b"Tm": _Walker.set_matrix,
    b"T*": _Walker.next_line,
    b"Tj": _Walker.show,
    b"TJ": _Walker.show_array,
    b"'": _Walker.show_next_line,
    b'"': _Walker.show_next_line,
    b"BMC": _Walker.begin_marked,
    b"BDC": _Walker.begin_marked_properties,
    b"EMC": _Walker.end_marked,
}


def page_pieces(page: Any) -> list[Piece]:
    """The page's text pieces in the order the content stream draws them."""
    content = page.get_contents()
    if content is None:
        return []
    found = page.get("/Resources")
    resources: Any = found.get_object() if found is not None else {}
    if "/XObject" in resources and any(
        xobject.get_object().get("/Subtype") == "/Form" for xobject in resources["/XObject"].values()
    ):
        raise Unreadable("form XObjects")
    return _Walker(resources).walk(content.operations)
