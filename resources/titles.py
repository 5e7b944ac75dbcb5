"""Titles: a document uploaded without one gets one from its content, and a
text that must be shortened is cut at a word boundary.

A document is *untitled* when it was given no title (the placeholder
``Untitled``), or when what stands in for one has no words: a title or file
name of digits and punctuation only, such as a date (``2024-05-01.pdf``) or
a reference number (``162428-0-349``). At ingestion such a document is
titled from its text (:func:`content_title`): its first heading when it
opens with one, else its first sentence, skipping lines that hold more
digits than letters (a date, a page number), and cut at a word boundary
with an ellipsis when longer than ``TITLE_MAX_CHARS`` (docs/ingestion.md,
"Titles").
"""

from __future__ import annotations

import posixpath
import re

from resources.parsing import ParsedDocument

PLACEHOLDER = "Untitled"
# A title made from the content fits a form's option label whole
# (chat/services/turn/clarify.py, MAX_LABEL_CHARS).
TITLE_MAX_CHARS = 80
ELLIPSIS = "\u2026"
# A heading this far into the document (in blocks) still opens it.
OPENING_BLOCKS = 3

# A sentence ends at . ! ? ؟ … 。 followed by a space (closing quotes kept).
_SENTENCE_END = re.compile(r"[.!?\u061f\u2026\u3002][\"')\]\u201d\u2019\u00bb]*(?=\s)")
# A Markdown heading's marks, when a text sent as plain text opens with one.
_HEADING_MARK = re.compile(r"^\s{0,3}#{1,6}\s+")
# What a cut title may not end with before its ellipsis.
_TRAILING = " \t,;:-\u2013\u2014/(["


def shorten(text: str, limit: int) -> str:
    """``text`` with its whitespace collapsed, cut to at most ``limit``
    characters at a word boundary with an ellipsis (a single word longer
    than ``limit`` is the one thing cut inside)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    room = limit - len(ELLIPSIS)
    cut = text[:room]
    if text[room] != " ":
        space = cut.rfind(" ")
        if space > 0:
            cut = cut[:space]
    return cut.rstrip(_TRAILING) + ELLIPSIS


def is_untitled(title: str, filename: str = "") -> bool:
    """Whether ``title`` is no title: blank, the placeholder, or without a
    letter (file name extension aside)."""
    title = title.strip()
    if not title or title == PLACEHOLDER:
        return True
    if filename and title == filename.strip():
        title = posixpath.splitext(title)[0]
    return not any(c.isalpha() for c in title)


def content_title(document: ParsedDocument) -> str | None:
    """The title a document's text gives (rules above); ``None`` when no
    line of it has a letter and no more digits than letters."""
    blocks = document.text.split("\n\n")
    offset = 0
    starts = []
    for block in blocks:
        starts.append(offset)
        offset += len(block) + 2
    for index, (start, block) in enumerate(zip(starts, blocks, strict=True)):
        if index >= OPENING_BLOCKS:
            break
        if start in document.headings and _wordy(block):
            return shorten(block, TITLE_MAX_CHARS)
    return text_title(document.text)


def text_title(text: str) -> str | None:
    """The first sentence of the first line of ``text`` with more letters
    than digits, shortened; ``None`` when there is none."""
    for line in text.splitlines():
        if _wordy(line):
            return shorten(first_sentence(_HEADING_MARK.sub("", line)), TITLE_MAX_CHARS)
    return None


def first_sentence(text: str) -> str:
    text = " ".join(text.split())
    match = _SENTENCE_END.search(text)
    return text[: match.end()] if match else text


def _wordy(line: str) -> bool:
    letters = sum(c.isalpha() for c in line)
    return letters > 0 and letters >= sum(c.isdigit() for c in line)
