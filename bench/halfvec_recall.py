#!/usr/bin/env python
"""A large workspace's own HNSW index on ``halfvec`` (2 bytes a dimension) against ``vector``.

    nice -n 10 .venv/bin/python bench/halfvec_recall.py   # after retrieval_latency --sizes 1000000

On the database ``bench/retrieval_latency.py --sizes 1000000`` leaves
(its 300,000-passage workspace, which has its own ``vector`` index), builds
a second partial index over ``embedding::halfvec(384)`` for the same
workspace, then for 100 SciFact claims compares both indexes' top 10 with
exact search (full precision): recall@10, p50/p95 of the query alone,
build time and index size. The halfvec index is dropped at the end; the
schema is not changed.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django
from bench.retrieval_latency import percentile

HALF = "passage_hnsw_half_bench"
_EXACT = """
SELECT p.id FROM retrieval_passage p WHERE p.workspace_id = %(workspace)s
ORDER BY (p.embedding <=> %(vector)s::vector) + 0 LIMIT 10
"""
_VECTOR = """
SELECT p.id FROM retrieval_passage p WHERE p.workspace_id = %(workspace)s
ORDER BY p.embedding <=> %(vector)s::vector LIMIT 10
"""
_HALFVEC = """
SELECT p.id FROM retrieval_passage p WHERE p.workspace_id = %(workspace)s
ORDER BY p.embedding::halfvec(384) <=> %(vector)s::halfvec(384) LIMIT 10
"""


def measure(
    sql: str, workspace: uuid.UUID, vectors: list[str], ef_search: int
) -> tuple[list[set[object]], list[float]]:
    from django.db import connection, transaction

    found: list[set[object]] = []
    times: list[float] = []
    for vector in vectors:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(ef_search)])
            started = time.perf_counter()
            cursor.execute(sql, {"workspace": workspace, "vector": vector})
            found.append({row[0] for row in cursor.fetchall()})
            times.append((time.perf_counter() - started) * 1000)
    return found, times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--ef-search", type=int, nargs="+", default=[100, 200])
    args = parser.parse_args()
    _django.setup("quality")
    from django.db import connection

    from bench import scifact
    from retrieval import workspace_index
    from retrieval.embeddings import get_embedder
    from retrieval.search import dense
    from workspaces.models import Workspace

    data = scifact.load()
    embedder = get_embedder()
    vectors = [
        dense.vector_literal(embedder.embed_queries([c])[0]) for c in list(data.queries.values())[:100]
    ]
    _django.setup_database(f"latency_{args.size}")
    workspace = Workspace.objects.get(name="large-0", organization__name="bench-latency").id
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {HALF}")
        started = time.perf_counter()
        cursor.execute(
            f"CREATE INDEX {HALF} ON retrieval_passage"
            " USING hnsw ((embedding::halfvec(384)) halfvec_cosine_ops)"
            f" WITH (m = 16, ef_construction = 64) WHERE workspace_id = '{workspace}'::uuid"
        )
        built = time.perf_counter() - started
        cursor.execute(
            "SELECT pg_relation_size(%s::regclass), pg_relation_size(%s::regclass)",
            [HALF, workspace_index.index_name(workspace)],
        )
        half_size, vector_size = cursor.fetchone()
    print(
        f"halfvec index built in {built:.0f} s: {half_size / 2**20:.0f} MB"
        f" (vector: {vector_size / 2**20:.0f} MB)"
    )
    exact, _ = measure(_EXACT, workspace, vectors, 40)
    try:
        for ef_search in args.ef_search:
            for label, sql in (("vector", _VECTOR), ("halfvec", _HALFVEC)):
                found, times = measure(sql, workspace, vectors, ef_search)
                recall = sum(len(e & f) for e, f in zip(exact, found, strict=True)) / sum(
                    len(e) for e in exact
                )
                print(
                    f"ef_search {ef_search}, {label}: recall@10 {recall:.3f}, "
                    f"p50 {percentile(times, 50):.1f} ms, p95 {percentile(times, 95):.1f} ms",
                    flush=True,
                )
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP INDEX IF EXISTS {HALF}")


if __name__ == "__main__":
    main()
