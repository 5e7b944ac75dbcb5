"""A passage's language and lexical analysis (``Passage.language``,
``Passage.lexical_text``): made for every passage ingestion writes
(retrieval/indexing.py) and filled in for the passages stored before
(migration 0006, :func:`passages_analyse`)."""

from __future__ import annotations

from typing import Any, TypedDict

from retrieval.languages import detect
from retrieval.languages.analysis import lexical_text

# Passages read, analysed and written back per statement by the fill.
FILL_BATCH = 1000

_PAGE = "SELECT id, text FROM retrieval_passage WHERE %s::uuid IS NULL OR id > %s::uuid ORDER BY id LIMIT %s"
_WRITE = """
UPDATE retrieval_passage p SET language = v.language, lexical_text = v.lexical_text
FROM unnest(%s::uuid[], %s::text[], %s::text[]) AS v(id, language, lexical_text)
WHERE p.id = v.id
"""


class PassageAnalysis(TypedDict):
    language: str
    lexical_text: str


def passage_analysis(text: str) -> PassageAnalysis:
    """The passage's ``language`` and ``lexical_text`` fields, for ``Passage(**...)``."""
    language = detect(text)
    return {"language": language, "lexical_text": lexical_text(text, language)}


def passages_analyse(cursor: Any, *, batch: int = FILL_BATCH) -> int:
    """Detect the language of every stored passage and write its analysis,
    ``batch`` passages a statement in id order; how many. In raw SQL on the
    table, so that the migration that adds the columns can call it with its
    own cursor (the model may have changed since)."""
    done = 0
    after = None
    while True:
        cursor.execute(_PAGE, [after, after, batch])
        rows = cursor.fetchall()
        if not rows:
            return done
        after = rows[-1][0]
        analysed = [passage_analysis(text) for _, text in rows]
        cursor.execute(
            _WRITE,
            [
                [row[0] for row in rows],
                [a["language"] for a in analysed],
                [a["lexical_text"] for a in analysed],
            ],
        )
        done += len(rows)
