"""Bulk loading of the latency bench's passages: COPY without indexes or triggers.

The first 1,000,000-passage load took 3,468 s (COPY in text format through
the per-statement lexeme trigger, every b-tree maintained row by row) and
the HNSW build 674 s on PostgreSQL's default memory. This loader:

1. drops every secondary index and the (resource, ordinal) constraint,
   and disables the lexeme triggers;
2. COPYs in binary (vectors as pgvector's binary form, no float printing
   and parsing), one statement per ``COPY_ROWS`` passages;
3. counts the lexemes once for all (the statement migration 0003 uses for
   existing rows) and turns the triggers back on;
4. builds the b-tree, GIN and HNSW indexes over the loaded table, with the
   server's maintenance memory and parallel workers
   (daneshyar/config/postgres.py), and each large workspace's own HNSW
   index through the same code as the worker task
   (retrieval/workspace_index.py).

Each step's time is returned for the report.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import partial

import numpy as np

PER_RESOURCE = 10
COPY_ROWS = 100_000
NOISE = 0.03  # per-dimension sigma: cosine to the source abstract about 0.85

_SECONDARY = (
    "DROP INDEX IF EXISTS passage_embedding_hnsw",
    "DROP INDEX IF EXISTS passage_search_vector_gin",
    "DROP INDEX IF EXISTS passage_ws_resource_idx",
    "ALTER TABLE retrieval_passage DROP CONSTRAINT IF EXISTS passage_unique_ordinal",
)
_BTREES = (
    "CREATE INDEX passage_ws_resource_idx ON retrieval_passage (workspace_id, resource_id)",
    "ALTER TABLE retrieval_passage ADD CONSTRAINT passage_unique_ordinal UNIQUE (resource_id, ordinal)",
)
_GIN = "CREATE INDEX passage_search_vector_gin ON retrieval_passage USING gin (search_vector)"
_HNSW = (
    "CREATE INDEX passage_embedding_hnsw ON retrieval_passage"
    " USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
)
_LEXEMES = """
INSERT INTO retrieval_workspacelexeme (workspace_id, lexeme, passages)
SELECT p.workspace_id, l.lexeme, count(*)
FROM retrieval_passage p CROSS JOIN LATERAL unnest(tsvector_to_array(p.search_vector)) AS l(lexeme)
GROUP BY p.workspace_id, l.lexeme
"""
_PASSAGE_COLUMNS = (
    "id, workspace_id, resource_id, ordinal, text, char_start, char_end, page, token_count, embedding,"
    " embedding_model, created_at, language, lexical_text"
)
_PASSAGE_TYPES = [
    "uuid", "uuid", "uuid", "int4", "text", "int4", "int4", "int4", "int4",
    "vector", "varchar", "timestamptz", "varchar", "text",
]  # fmt: skip


def documents(plan: Sequence[tuple[uuid.UUID, int]]) -> list[tuple[uuid.UUID, uuid.UUID, int]]:
    """(resource id, workspace id, passages) for every resource of ``PER_RESOURCE`` passages."""
    found: list[tuple[uuid.UUID, uuid.UUID, int]] = []
    for workspace_id, count in plan:
        for start in range(0, count, PER_RESOURCE):
            found.append((uuid.uuid4(), workspace_id, min(PER_RESOURCE, count - start)))
    return found


def _timed(steps: dict[str, float], name: str, work: Callable[[], object]) -> None:
    started = time.perf_counter()
    work()
    steps[name] = round(time.perf_counter() - started, 1)
    print(f"  {name}: {steps[name]:.0f} s", flush=True)


def _copy_resources(raw: object, docs: Sequence[tuple[uuid.UUID, uuid.UUID, int]], ready: str) -> None:
    now = datetime.now(UTC)
    with raw.copy(  # type: ignore[attr-defined]
        "COPY resources_resource (id, workspace_id, title, filename, content_type, size_bytes, sha256,"
        " status, error_code, error_message, passage_count, attempts, status_changed_at, created_at,"
        " updated_at, ingest_claimed_by, metadata) FROM STDIN"
    ) as copy:
        for n, (resource_id, workspace_id, count) in enumerate(docs):
            copy.write_row(
                (resource_id, workspace_id, f"doc {n}", "", "text/plain", 0, resource_id.hex, ready,
                 "", "", count, 1, now, now, now, "", "{}")
            )  # fmt: skip


def _copy_passages(
    raw: object, docs: Sequence[tuple[uuid.UUID, uuid.UUID, int]], base: np.ndarray, texts: Sequence[str]
) -> None:
    from django.conf import settings

    from retrieval.passage_analysis import passage_analysis

    model = settings.EMBEDDING_MODEL_NAME  # a search compares only the configured model's
    # Each source text's language and lexical analysis, as ingestion stores
    # them (the search vector is made from lexical_text), once per text.
    analyses = [passage_analysis(text) for text in texts]
    rng = np.random.default_rng(7)
    now = datetime.now(UTC)
    source = 0
    step = COPY_ROWS // PER_RESOURCE
    started = time.perf_counter()
    for first in range(0, len(docs), step):
        chunk = docs[first : first + step]
        rows = sum(count for _, _, count in chunk)
        sources = (np.arange(source, source + rows) % len(texts)).astype(int)
        vectors = base[sources] + rng.normal(scale=NOISE, size=(rows, base.shape[1]))
        vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
        with raw.copy(f"COPY retrieval_passage ({_PASSAGE_COLUMNS}) FROM STDIN (FORMAT BINARY)") as copy:  # type: ignore[attr-defined]
            copy.set_types(_PASSAGE_TYPES)
            row = 0
            for resource_id, workspace_id, count in chunk:
                for ordinal in range(count):
                    text = texts[sources[row]]
                    analysis = analyses[sources[row]]
                    copy.write_row(
                        (uuid.uuid4(), workspace_id, resource_id, ordinal, text, 0, len(text), None,
                         len(text.split()), vectors[row], model, now, analysis["language"],
                         analysis["lexical_text"])
                    )  # fmt: skip
                    row += 1
        source += rows
        print(f"    {source:,} passages after {time.perf_counter() - started:.0f} s", flush=True)


def load(
    plan: Sequence[tuple[uuid.UUID, int]],
    base: np.ndarray,
    texts: Sequence[str],
    *,
    shared_index: bool = True,
) -> dict[str, float]:
    """Load ``plan`` ((workspace id, passages) pairs; workspaces exist, tables are empty)."""
    from django.db import connection
    from pgvector.psycopg import register_vector

    from resources.models import ResourceStatus
    from retrieval import workspace_index

    steps: dict[str, float] = {}
    clean = [t.replace("\x00", " ") for t in texts]
    docs = documents(plan)
    connection.ensure_connection()
    register_vector(connection.connection)  # before the cursor: it copies the connection's adapters
    with connection.cursor() as cursor:
        for statement in _SECONDARY:
            cursor.execute(statement)
        for workspace_id in workspace_index.own_indexes():
            workspace_index.drop(workspace_id)
        cursor.execute("ALTER TABLE retrieval_passage DISABLE TRIGGER USER")
        raw = cursor.cursor
        _timed(steps, "copy resources", lambda: _copy_resources(raw, docs, ResourceStatus.READY.value))
        _timed(steps, "copy passages", lambda: _copy_passages(raw, docs, base, clean))
        _timed(steps, "lexeme counts", lambda: cursor.execute(_LEXEMES))
        cursor.execute("ALTER TABLE retrieval_passage ENABLE TRIGGER USER")
        _timed(steps, "b-tree indexes", lambda: [cursor.execute(s) for s in _BTREES])
        _timed(steps, "GIN index", lambda: cursor.execute(_GIN))
        _timed(steps, "VACUUM ANALYZE", lambda: cursor.execute("VACUUM ANALYZE retrieval_passage"))
        for workspace_id, count in plan:
            if count > workspace_index.OWN_INDEX_MIN_PASSAGES:
                build = partial(workspace_index.build, workspace_id)
                _timed(steps, f"own HNSW index, {count:,} passages", build)
        if shared_index:
            _timed(steps, "shared HNSW index", lambda: cursor.execute(_HNSW))
        cursor.execute("VACUUM ANALYZE resources_resource")
        cursor.execute("VACUUM ANALYZE retrieval_workspacelexeme")
    return steps
