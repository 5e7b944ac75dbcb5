"""A passage's text as answer units: sentences, list items and table rows,
each with the heading it sits under.

Passages are chunks of parsed documents (resources/parsing): blocks
separated by a blank line, where a Markdown, HTML or DOCX heading is a block
of its own with its markers removed (a text/plain upload keeps its ``#``),
and a PDF's text layer is lines broken wherever the page's column ended.
So the structure is read back from the text itself:

* **Lines join** inside a block: a line that does not end a sentence goes on
  on the next line, unless that line is a list item, a table row or a
  heading. A word broken at the line end ("recom-" / "mended") is rejoined
  without its hyphen when the next line goes on in lower case, and keeps it
  otherwise ("COVID-" / "19").
* **Headings** are ``#`` lines; short title-like lines (at most
  ``MAX_TITLE_WORDS`` words, no end punctuation, no number after the first
  word, alone in their block or clearly shorter than the block's other
  lines); and questions standing alone as a line or block (FAQ entries).
  A heading is never an answer: it is the context of the units under it.
  A short unpunctuated line right under a question is its answer, not a
  heading.
* **List items** (``-``, ``*``, ``•``, ``1.``, ``a)``) and **table rows**
  (``a | b``) are units of their own; an item that wraps onto the next line
  (not starting in upper case) goes on there. Items that follow each other
  form one list (``group``), with the line that introduces them (ending in
  ``:``) as its lead; a numbered list is a list of ``STEP`` units.
* Everything else is split into **sentences** at ``.``, ``!``, ``?`` and
  ``…`` followed by a capital or a digit, except after an abbreviation. A
  question inside a paragraph is a ``QUESTION`` unit: never an answer.

**Persian and Arabic.** Their script has no capitals, so a sentence ends at
``. ! ? …``, the Arabic question mark (U+061F) or the Urdu full stop
(U+06D4) followed by a letter of the script (or a digit, Persian and
Arabic-Indic ones included); a line or sentence ending in the Arabic
question mark is a question as one ending in ``?`` is. A title-like line
may start with a letter of a script without case, and a line ending in the
Arabic comma (U+060C) or semicolon (U+061B) is no title. Words are runs of letters and digits of any script (a
zero-width non-joiner inside a Persian word splits it in two, as it does for
the lexical leg).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from languages import LANGUAGES

# A word, for counting a unit's words (chat/text.py compares texts by them too).
WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")

SENTENCE, ITEM, STEP, ROW, LEAD, HEADING, QUESTION = (
    "sentence", "item", "step", "row", "lead", "heading", "question",
)  # fmt: skip
ANSWERABLE = frozenset({SENTENCE, ITEM, STEP, ROW, LEAD})
LISTED = frozenset({ITEM, STEP, LEAD})

MAX_TITLE_WORDS = 10
# A line at most this share of its block's longest line, followed by a line
# that starts a sentence, is a title rather than a wrapped line.
TITLE_WIDTH_SHARE = 0.7
MIN_WORDS = 3
MAX_SENTENCE_CHARS = 600

# Where a period ends no sentence: every language's abbreviations
# (languages/en/abbreviations.py), whatever the passage's language.
_ABBREVIATIONS = frozenset().union(*(language.abbreviations for language in LANGUAGES.values()))
# A letter of the Arabic script (Persian, Arabic, Urdu): no capitals there.
_ARABIC_SCRIPT = "\u0620-\u064a\u066e-\u06d3\u06d5\u06fa-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufefc"
_QUESTION_MARKS = ("?", "\u061f")
_BOUNDARY = re.compile(
    r"(?<=[.!?\u2026\u061f\u06d4])[\"')\]\u201d\u2019\u00bb]*\s+"
    rf"(?=[\"'(\[\u201c\u2018\u00ab]?[A-Z\d{_ARABIC_SCRIPT}])"
)
_BULLET = re.compile(r"(?:[-*\u2022\u2023\u25e6\u2043]|(\d{1,3}[.)])|[a-z][.)])\s+")
_MARKDOWN_HEADING = re.compile(r"#{1,6}\s+")
_TABLE_RULE = re.compile(r"\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?")
_ENDS_SENTENCE = re.compile(r"[.!?\u2026\u061f\u06d4][\"')\]\u201d\u2019\u00bb]*$")
_ENDS_CLAUSE = re.compile(r"[.!?\u2026:;,\u060c\u061b\u061f\u06d4-][\"')\]\u201d\u2019\u00bb]*$")
_LATER_NUMBER = re.compile(r"\s.*\d")


@dataclass(frozen=True)
class Unit:
    start: int  # offset in the passage text, for document order
    text: str  # whitespace collapsed, bullet removed, broken words rejoined
    kind: str  # one of SENTENCE, ITEM, STEP, ROW, LEAD, HEADING, QUESTION
    group: int  # units of one list (with its lead) share it; other units have their own
    heading: str | None  # the heading above it in the passage, if any


@dataclass
class _Line:
    """One logical line: physical lines joined, with each character's offset."""

    kind: str  # "text", ITEM, STEP, ROW or HEADING (a ``#`` line)
    text: str = ""
    origin: list[int] = field(default_factory=list)
    lines: int = 0
    block: int = 0
    width: int = 0  # the longest physical line of its block

    def extend(self, text: str, start: int) -> None:
        if self.text:
            if self.text.endswith("-") and self.text[-2:-1].isalpha() and text[:1].islower():
                self.text, self.origin = self.text[:-1], self.origin[:-1]
            elif not self.text.endswith("-"):
                self.text += " "
                self.origin.append(start)
        self.text += text
        self.origin.extend(range(start, start + len(text)))
        self.lines += 1


def segment(text: str) -> list[Unit]:
    """The units of a passage, in order, headings included."""
    units: list[Unit] = []
    heading: str | None = None
    previous: _Line | None = None
    for line in _logical_lines(text):
        if _is_heading(line, previous):
            heading = " ".join(line.text.split())
            units.append(Unit(line.origin[0], heading, HEADING, len(units), heading))
        else:
            group = _group(units, line, previous)
            units.extend(_units_of(line, group, heading))
        previous = line
    return units


def split_sentences(text: str) -> list[tuple[int, str]]:
    """``(offset, text)`` of the units that may answer (no headings, no questions)."""
    return [(u.start, u.text) for u in segment(text) if u.kind in ANSWERABLE]


def _logical_lines(text: str) -> list[_Line]:
    out: list[_Line] = []
    for block_index, block in enumerate(_blocks(text)):
        width = max(len(line) for _, line in block)
        current: _Line | None = None
        for start, line in block:
            kind, body, skip = _classify(line)
            if kind == "rule":
                continue
            if current is not None and kind == "text" and _goes_on(current, body, width):
                current.extend(body, start + skip)
                continue
            current = _Line(kind, block=block_index, width=width)
            current.extend(body, start + skip)
            out.append(current)
    return out


def _blocks(text: str) -> list[list[tuple[int, str]]]:
    """Runs of non-blank lines, each line as (offset of its first character, stripped text)."""
    blocks: list[list[tuple[int, str]]] = [[]]
    offset = 0
    for raw in text.splitlines(keepends=True):
        stripped = raw.strip()
        if stripped:
            blocks[-1].append((offset + len(raw) - len(raw.lstrip()), stripped))
        elif blocks[-1]:
            blocks.append([])
        offset += len(raw)
    return [block for block in blocks if block]


def _classify(line: str) -> tuple[str, str, int]:
    """(kind, text without its marker, length of the marker)."""
    marker = _MARKDOWN_HEADING.match(line)
    if marker:
        return HEADING, line[marker.end() :].rstrip("# "), marker.end()
    if _TABLE_RULE.fullmatch(line):
        return "rule", "", 0
    if " | " in line or line.startswith("|"):
        return ROW, " | ".join(c.strip() for c in line.strip("|").split("|") if c.strip()), 0
    bullet = _BULLET.match(line)
    if bullet:
        return (STEP if bullet.group(1) else ITEM), line[bullet.end() :], bullet.end()
    return "text", line, 0


def _goes_on(current: _Line, line: str, width: int) -> bool:
    """Whether ``line`` continues ``current`` (the sentence was cut by the line end)."""
    if current.kind not in ("text", ITEM, STEP) or _ENDS_SENTENCE.search(current.text):
        return False
    if current.text.endswith("-"):
        return True  # a word broken at the line end
    if current.kind != "text":
        return not line[:1].isupper()
    return not (current.lines == 1 and _title_like(current.text) and _short(current.text, width))


def _title_like(text: str) -> bool:
    words = text.split()
    return (
        0 < len(words) <= MAX_TITLE_WORDS
        and (text[:1].isupper() or text[:1].isdigit() or _caseless(text[:1]))
        and not _ENDS_CLAUSE.search(text)
        and not _LATER_NUMBER.search(text)
    )


def _caseless(char: str) -> bool:
    """A letter of a script without capitals (Arabic, Hebrew, CJK…)."""
    return char.isalpha() and char.lower() == char.upper()


def _short(text: str, width: int) -> bool:
    return len(text) <= TITLE_WIDTH_SHARE * width


def _is_heading(line: _Line, previous: _Line | None) -> bool:
    if line.kind == HEADING:
        return True
    if line.kind != "text" or (line.lines > 1 and not line.text.endswith(_QUESTION_MARKS)):
        return False
    if line.text.endswith(_QUESTION_MARKS):
        # A question is a heading when it is the whole line, one sentence.
        return not any(True for _ in _BOUNDARY.finditer(line.text))
    if previous is not None and previous.text.endswith(_QUESTION_MARKS) and _is_heading(previous, None):
        return False  # the short answer right under a question
    alone = previous is None or previous.block != line.block
    return _title_like(line.text) and (alone or _short(line.text, line.width))


def _group(units: list[Unit], line: _Line, previous: _Line | None) -> int:
    """Items go on the list of the item or lead just before them; anything else starts a group."""
    if line.kind in (ITEM, STEP) and previous is not None and units and units[-1].kind in LISTED:
        return units[-1].group
    return len(units)


def _units_of(line: _Line, group: int, heading: str | None) -> list[Unit]:
    units = []
    for start, end in _sentence_spans(line.text):
        text = line.text[start:end].strip()
        kind = _kind(line, text, end == len(line.text))
        if kind in ANSWERABLE and len(WORD.findall(text.lower())) < MIN_WORDS:
            continue  # fragments carry no answer on their own
        units.append(Unit(line.origin[start], text[:MAX_SENTENCE_CHARS], kind, group, heading))
    return units


def _kind(line: _Line, text: str, last: bool) -> str:
    if text.endswith(_QUESTION_MARKS):
        return QUESTION
    if line.kind == "text":
        return LEAD if last and text.endswith(":") else SENTENCE
    return line.kind


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        if _ends_with_abbreviation(text[start : match.start()]):
            continue
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]


def _ends_with_abbreviation(text: str) -> bool:
    words = text.rstrip().rstrip(".").rsplit(None, 1)
    return bool(words) and words[-1].lower().strip("(") in _ABBREVIATIONS
