"""The query's terms marked in passage texts, matched as the lexical leg
matches them: a word is marked when the lexical analysis
(languages.analysis: the passage's language's stemmer, its stop
words dropped) turns it into one of the query's terms, so "refunds" in a
passage is marked for "refund" in the question and "the" never is."""

from __future__ import annotations

import re
from collections.abc import Sequence

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from languages import detect
from languages.analysis import query_text, terms

_WORD = re.compile(r"\w+")


def highlight_terms(query: str, texts: Sequence[str]) -> list[SafeString]:
    """Each text, HTML-escaped, with the words that match the query in ``<mark>``."""
    wanted = set(query_text(query).split())
    out: list[SafeString] = []
    for text in texts:
        language = detect(text)
        words = {match.group().lower() for match in _WORD.finditer(text)}
        marked = {word for word in words if wanted.intersection(terms(word, language))}
        pieces: list[str] = []
        last = 0
        for match in _WORD.finditer(text):
            if match.group().lower() not in marked:
                continue
            pieces.append(escape(text[last : match.start()]))
            pieces.append(f"<mark>{escape(match.group())}</mark>")
            last = match.end()
        pieces.append(escape(text[last:]))
        out.append(mark_safe("".join(pieces)))  # noqa: S308 (every piece of text is escaped above)
    return out
