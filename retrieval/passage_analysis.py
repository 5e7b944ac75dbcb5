"""A passage's language and lexical analysis (``Passage.language``,
``Passage.lexical_text``): made for every passage ingestion writes
(retrieval/indexing.py) and filled in for the passages stored before
(migration 0007, :func:`passages_analyse`).

A passage too short to tell its language by itself ("Solar panels convert
sunlight into electricity.": no function word says English) takes its
document's, detected on the document's passages together (the same letters
and words, more of them): a document's passages rarely change language, and
an English passage analysed without English stemming would not meet
"panel" for "panels"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

from psycopg import sql

from languages import UNDETERMINED, detect
from languages.analysis import lexical_text

# Resources whose passages the fill reads, analyses and writes per statement.
FILL_RESOURCES = 100

# The fill's statements, on the passage table ``{passage}`` (its name the
# caller's: the model's db_table, or the historical model's in a migration).
_RESOURCES = sql.SQL("""
SELECT DISTINCT resource_id FROM {passage}
WHERE %s::uuid IS NULL OR resource_id > %s::uuid ORDER BY resource_id LIMIT %s
""")
_PASSAGES = sql.SQL(
    "SELECT id, resource_id, text FROM {passage} WHERE resource_id = ANY(%s::uuid[]) ORDER BY ordinal"
)
_WRITE = sql.SQL("""
UPDATE {passage} p SET language = v.language, lexical_text = v.lexical_text
FROM unnest(%s::uuid[], %s::text[], %s::text[]) AS v(id, language, lexical_text)
WHERE p.id = v.id
""")


class PassageAnalysis(TypedDict):
    language: str
    lexical_text: str


def passages_analysis(texts: Sequence[str]) -> list[PassageAnalysis]:
    """The ``language`` and ``lexical_text`` fields of a document's passages,
    in order, for ``Passage(**...)`` (module docstring)."""
    document = detect("\n".join(texts)) if texts else UNDETERMINED
    out: list[PassageAnalysis] = []
    for text in texts:
        language = detect(text)
        if language == UNDETERMINED:
            language = document
        out.append({"language": language, "lexical_text": lexical_text(text, language)})
    return out


def passage_analysis(text: str) -> PassageAnalysis:
    """The fields of a document's one passage."""
    return passages_analysis([text])[0]


def passages_analyse(cursor: Any, *, table: str, resources: int = FILL_RESOURCES) -> int:
    """Detect the language of every stored passage and write its analysis,
    the passages of ``resources`` resources a statement in resource order;
    how many passages. In SQL on the passage table named ``table``
    (``Passage._meta.db_table``), so that the migration that adds the
    columns can call it with its own cursor and its historical model's
    table (the model may have changed since)."""
    passage = sql.Identifier(table)
    select_resources = _RESOURCES.format(passage=passage)
    select_passages = _PASSAGES.format(passage=passage)
    write = _WRITE.format(passage=passage)
    done = 0
    after = None
    while True:
        cursor.execute(select_resources, [after, after, resources])
        ids = [row[0] for row in cursor.fetchall()]
        if not ids:
            return done
        after = ids[-1]
        cursor.execute(select_passages, [ids])
        by_resource: dict[Any, list[tuple[Any, str]]] = {}
        for passage_id, resource_id, text in cursor.fetchall():
            by_resource.setdefault(resource_id, []).append((passage_id, text))
        written: list[Any] = []
        analysed: list[PassageAnalysis] = []
        for passages in by_resource.values():
            written.extend(passage_id for passage_id, _ in passages)
            analysed.extend(passages_analysis([text for _, text in passages]))
        cursor.execute(
            write,
            [written, [a["language"] for a in analysed], [a["lexical_text"] for a in analysed]],
        )
        done += len(written)
