"""A passage's headings as the answer sees them: never an answer, never a cited part.

retrieval/units.py reads headings out of a passage's text (``#`` lines,
short title-like lines, questions standing alone). One kind of line it
reads as a sentence is a document's **title line** with a full stop,
"Toaster T2 manual." at the top of the toaster's manual: it is three words
long, so it is kept as a unit, and because it names the product it scores
high for any question about the product — until the title answered "How do
I clean the toaster?" in place of the sentence that does.

A passage's first unit is its document's title line when all of these hold:

* the passage is the document's first (``ordinal`` 0) and the unit is its
  first line, alone in its block (a blank line or the passage's end after it);
* it has at most ``MAX_TITLE_WORDS`` words (a title-like line's length,
  retrieval/units.py);
* it names its document, and says nothing else: more than half of its
  content words are the document title's ("Toaster T2 manual." of "Toaster
  T2"), and no word but its first is a function word (the language's stop
  words, chat/text.py): a name, not a statement. "Returns are free." at the
  top of "Returns" states something (and half of its words are not the
  title's); so does "Returns are free within 30 days." at the top of a
  document titled by that very line.

The extractive engine never answers with a title line (chat/answerability.py);
the output check takes the citation off a
generated part that only repeats a heading or the title line of the passage
it cites (chat/output.py).
"""

from __future__ import annotations

import re
from dataclasses import replace

from chat.text import content_words
from retrieval.units import ANSWERABLE, HEADING, MAX_TITLE_WORDS, WORD, Unit, segment

_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def answer_units(text: str, *, ordinal: int, title: str) -> list[Unit]:
    """The units of a passage (``text``, the ``ordinal``-th of a document
    titled ``title``; retrieval/units.py), its document's title line of kind
    ``HEADING``. It does not become the heading of the units under it: a
    document's name says nothing about which of its sentences answers, and
    as a heading it would raise them all alike."""
    units = segment(text)
    if not _is_title_line(text, units, ordinal=ordinal, title=title):
        return units
    return [replace(units[0], kind=HEADING, heading=units[0].text), *units[1:]]


def _is_title_line(text: str, units: list[Unit], *, ordinal: int, title: str) -> bool:
    """Whether the first of a passage's ``units`` is its document's title line (rules above)."""
    if ordinal != 0 or not units or units[0].kind not in ANSWERABLE:
        return False
    block = _BLANK_LINE.split(text.strip(), maxsplit=1)[0]
    if " ".join(block.split()) != units[0].text:
        return False  # not a line of its own: the sentence opens a paragraph
    return names_document(units[0].text, title)


def names_document(line: str, title: str) -> bool:
    """Whether a short ``line`` names the document titled ``title`` and says
    nothing else (rules above)."""
    words = WORD.findall(line.lower())
    if not words or len(words) > MAX_TITLE_WORDS:
        return False
    if any(not content_words(word) for word in words[1:]):
        return False  # a statement ("is", "are", "with"), not a name
    own = content_words(line)
    return len(own & content_words(title)) * 2 > len(own)


def is_heading(part: str, *, text: str, ordinal: int, title: str) -> bool:
    """Whether ``part`` says no more than one heading of the passage (``text``,
    ``ordinal``, ``title``) it cites, its document's title line included: the
    same content words."""
    words = content_words(part)
    if not words:
        return False
    units = answer_units(text, ordinal=ordinal, title=title)
    return any(unit.kind == HEADING and content_words(unit.text) == words for unit in units)
