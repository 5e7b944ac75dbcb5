"""The query's terms marked in passage texts, matched as the lexical leg
matches them: a word is marked when PostgreSQL's text search configuration
(retrieval.models.TEXT_SEARCH_CONFIG: English stemming, stop words dropped)
turns it into one of the query's lexemes, so "refunds" in a passage is
marked for "refund" in the question and "the" never is."""

from __future__ import annotations

import re
from collections.abc import Sequence

from django.db import connection
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from retrieval.models import TEXT_SEARCH_CONFIG

_WORD = re.compile(r"\w+")

_LEXEMES = """
SELECT position, array(SELECT lexeme FROM unnest(to_tsvector(%s::regconfig, word)))
FROM unnest(%s::text[]) WITH ORDINALITY AS t(word, position)
"""


def _lexemes(texts: list[str]) -> list[set[str]]:
    """The lexemes of each text, in one query."""
    if not texts:
        return []
    with connection.cursor() as cursor:
        cursor.execute(_LEXEMES, [TEXT_SEARCH_CONFIG, texts])
        found = {int(position): set(lexemes or []) for position, lexemes in cursor.fetchall()}
    return [found.get(i, set()) for i in range(1, len(texts) + 1)]


def highlight_terms(query: str, texts: Sequence[str]) -> list[SafeString]:
    """Each text, HTML-escaped, with the words that match the query in ``<mark>``."""
    words = sorted({match.group().lower() for text in texts for match in _WORD.finditer(text)})
    lexemes = _lexemes([query, *words])
    wanted = lexemes[0] if lexemes else set()
    marked = {word for word, found in zip(words, lexemes[1:], strict=True) if found & wanted}
    out: list[SafeString] = []
    for text in texts:
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
