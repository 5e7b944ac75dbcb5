"""Visible answer text from a partially generated reply.

While the model streams its JSON, clients want the words, not the braces.
:func:`visible_text` reads the (possibly truncated) JSON and returns the
rendering of the answer's ``text`` values (or the form's ``question``) as far
as they have been generated. It only grows as more JSON arrives, so the
stream's deltas are the new suffix each time.
"""

from __future__ import annotations

import json

from chat.output import render_content

_VISIBLE_KEYS = frozenset({"text", "question"})
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _read_string(raw: str, start: int) -> tuple[str, int, bool]:
    """Decode the JSON string whose body starts at ``start``.

    Returns (decoded text so far, index after the closing quote, complete?).
    An escape cut off at the end of ``raw`` is left out until it completes.
    """
    out: list[str] = []
    i = start
    n = len(raw)
    while i < n:
        char = raw[i]
        if char == '"':
            return "".join(out), i + 1, True
        if char == "\\":
            if i + 1 >= n:
                break
            code = raw[i + 1]
            if code == "u":
                if i + 6 > n:
                    break
                try:
                    out.append(json.loads(f'"{raw[i : i + 6]}"'))
                except ValueError:
                    out.append("\ufffd")
                i += 6
                continue
            out.append(_ESCAPES.get(code, code))
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out), n, False


def visible_texts(raw: str) -> list[str]:
    """The ``text``/``question`` string values found so far, in order."""
    texts: list[str] = []
    previous: str | None = None  # last complete string (a key candidate)
    key: str | None = None
    expecting_value = False
    i = 0
    while i < len(raw):
        char = raw[i]
        if char == '"':
            value, i, complete = _read_string(raw, i + 1)
            if expecting_value and key in _VISIBLE_KEYS:
                texts.append(value)
                previous = None
            else:
                previous = value
            expecting_value = False
            if not complete:
                break
            continue
        if char == ":":
            key, expecting_value = previous, True
        elif char in ",{}[]":
            previous, expecting_value = None, False
        i += 1
    return texts


def visible_text(raw: str) -> str:
    texts = visible_texts(raw)
    # Strip like the final rendering does, but only on the left: trailing
    # whitespace may be followed by more words.
    return render_content([t.strip() if i < len(texts) - 1 else t.lstrip() for i, t in enumerate(texts)])


class DeltaExtractor:
    """Feed raw JSON chunks; get back the new visible text of each."""

    def __init__(self) -> None:
        self.raw = ""
        self.emitted = ""

    def feed(self, chunk: str) -> str:
        self.raw += chunk
        text = visible_text(self.raw)
        if not text.startswith(self.emitted):
            # Only possible if a trailing space was later stripped; never re-send.
            return ""
        delta = text[len(self.emitted) :]
        self.emitted = text
        return delta
