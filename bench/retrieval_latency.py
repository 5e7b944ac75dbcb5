#!/usr/bin/env python
"""Search latency and filtered-index recall at 5,000 and 100,000 passages.

    .venv/bin/python bench/retrieval_latency.py                 # both sizes
    .venv/bin/python bench/retrieval_latency.py --sizes 5000    # one size

Layout per size: 100 small workspaces of SMALL passages each (two resources
of ten) and one large workspace with the rest, all in one table and one HNSW
index, in the database ``daneshyar_bench_latency_<size>`` (kept between runs).
Passage vectors are SciFact abstract embeddings plus Gaussian noise,
re-normalised (so the index sees realistic, clustered data, not uniform
random vectors); texts are the matching abstracts, so the lexical leg works
on real words. Queries are SciFact claims.

Figures: p50/p95 of ``retrieval.search.search`` with the query embedding
taken out (a precomputed vector is served), the query embedding itself
measured separately, and recall@10 of the dense leg's index path against
exact search, for the large and a small workspace.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django

SMALL_WORKSPACES = 100
SMALL = 20  # passages in each small workspace
PER_RESOURCE = 10
NOISE = 0.03  # per-dimension sigma: cosine to the source abstract about 0.85
QUERIES = 200


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def load(size: int, base: np.ndarray, texts: list[str], reload: bool) -> tuple[uuid.UUID, list[uuid.UUID]]:
    """Fill the bench database with ``size`` passages (once); the workspace ids."""
    from django.db import connection

    from resources.models import ResourceStatus
    from retrieval.models import Passage
    from workspaces.models import Organization, Workspace

    large_size = size - SMALL_WORKSPACES * SMALL
    organization, _ = Organization.objects.get_or_create(name="bench-latency")
    if Passage.objects.count() == size and not reload:
        large = Workspace.objects.get(organization=organization, name="large")
        smalls = list(
            Workspace.objects.filter(organization=organization, name__startswith="small")
            .order_by("name")
            .values_list("id", flat=True)
        )
        return large.id, smalls
    with connection.cursor() as cursor:
        # TRUNCATE skips the DELETE triggers, so the counts go with it.
        cursor.execute("TRUNCATE retrieval_passage, retrieval_workspacelexeme, resources_resource CASCADE")
    Workspace.objects.filter(organization=organization).delete()
    large = Workspace.objects.create(organization=organization, name="large")
    small_ids = [
        Workspace.objects.create(organization=organization, name=f"small-{i:03d}").id
        for i in range(SMALL_WORKSPACES)
    ]
    plan = [(large.id, large_size)] + [(w, SMALL) for w in small_ids]
    rng = np.random.default_rng(7)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        # Bulk load without indexes, then build them once (much faster than
        # maintaining HNSW row by row). Same definitions as the migrations.
        cursor.execute("DROP INDEX IF EXISTS passage_embedding_hnsw")
        cursor.execute("DROP INDEX IF EXISTS passage_search_vector_gin")
        now = time.strftime("%Y-%m-%d %H:%M:%S+00")
        documents: list[tuple[uuid.UUID, uuid.UUID, int]] = []  # (resource, workspace, passages)
        for workspace_id, count in plan:
            for start in range(0, count, PER_RESOURCE):
                documents.append((uuid.uuid4(), workspace_id, min(PER_RESOURCE, count - start)))
        raw = cursor.cursor
        with raw.copy(
            "COPY resources_resource (id, workspace_id, title, filename, content_type, size_bytes, sha256,"
            " status, error_code, error_message, passage_count, attempts, status_changed_at, created_at,"
            " updated_at) FROM STDIN"
        ) as copy:
            for n, (resource_id, workspace_id, count) in enumerate(documents):
                copy.write(
                    f"{resource_id}\t{workspace_id}\tdoc {n}\t\ttext/plain\t0\t{resource_id.hex}\t"
                    f"{ResourceStatus.READY.value}\t\t\t{count}\t1\t{now}\t{now}\t{now}\n"
                )
        clean = [t.replace("\\", " ").replace("\t", " ").replace("\n", " ") for t in texts]
        source = 0
        with raw.copy(
            "COPY retrieval_passage (id, workspace_id, resource_id, ordinal, text, char_start, char_end,"
            " page, token_count, embedding, embedding_model, created_at) FROM STDIN"
        ) as copy:
            for resource_id, workspace_id, count in documents:
                for ordinal in range(count):
                    i = source % len(clean)
                    vector = base[i] + rng.normal(scale=NOISE, size=base.shape[1])
                    vector /= np.linalg.norm(vector)
                    text = clean[i]
                    copy.write(
                        f"{uuid.uuid4()}\t{workspace_id}\t{resource_id}\t{ordinal}\t{text}\t0\t{len(text)}\t"
                        f"\\N\t{len(text.split())}\t[{','.join(f'{x:.5f}' for x in vector)}]\tbench\t{now}\n"
                    )
                    source += 1
        print(f"  loaded {size} passages in {time.perf_counter() - started:.0f} s", flush=True)
        started = time.perf_counter()
        cursor.execute("SET maintenance_work_mem = '1GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        cursor.execute(
            "CREATE INDEX passage_embedding_hnsw ON retrieval_passage"
            " USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
        )
        print(f"  HNSW index built in {time.perf_counter() - started:.0f} s", flush=True)
        cursor.execute(
            "CREATE INDEX passage_search_vector_gin ON retrieval_passage USING gin (search_vector)"
        )
        cursor.execute("VACUUM ANALYZE retrieval_passage")
        cursor.execute("VACUUM ANALYZE resources_resource")
    return large.id, small_ids


def recall_at_10(workspace_id: uuid.UUID, vectors: list[str]) -> float:
    from django.db import connection, transaction

    from retrieval.search import dense

    hits = total = 0
    for vector in vectors:
        with transaction.atomic(), connection.cursor() as cursor:
            exact = set(dense.nearest(cursor, workspace_id=workspace_id, vector=vector, limit=10, exact=True))
            cursor.execute("SET LOCAL enable_sort = off")  # the index path, whatever the planner prefers
            found = set(
                dense.nearest(cursor, workspace_id=workspace_id, vector=vector, limit=10, exact=False)
            )
        hits += len(exact & found)
        total += len(exact)
    return hits / total


def plain_filtered_rows(workspace_id: uuid.UUID, vectors: list[str], k: int = 5) -> float:
    """Mean rows a filtered HNSW scan with pgvector's defaults returns (no iterative scan)."""
    from django.db import connection, transaction

    from retrieval.search import dense

    rows = []
    for vector in vectors:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_sort = off")
            cursor.execute("SET LOCAL hnsw.iterative_scan = off")
            cursor.execute("SET LOCAL hnsw.ef_search = 40")
            cursor.execute(
                dense._NEAREST_INDEXED,
                {"vector": vector, "workspace": workspace_id, "ready": dense.READY, "limit": k},
            )
            rows.append(len(cursor.fetchall()))
    return statistics.mean(rows)


def run_size(
    size: int, data: object, base: np.ndarray, query_vectors: np.ndarray, claims: list[str], reload: bool
) -> None:
    from retrieval.search import dense, service
    from retrieval.search.service import Legs, search
    from workspaces.models import Workspace

    print(f"\n== {size:,} passages: 1 large workspace + {SMALL_WORKSPACES} of {SMALL} ==", flush=True)
    texts = [f"{d['title']}\n\n{d['text']}" for d in data.corpus]  # type: ignore[attr-defined]
    large_id, small_ids = load(size, base, texts, reload)
    literals = [dense.vector_literal(v) for v in query_vectors]
    by_text = dict(zip(claims, query_vectors.tolist(), strict=True))

    class Stub:  # serves the precomputed query vector: embedding is timed separately
        def embed_query(self, text: str) -> list[float]:
            return by_text[text]

    real_get_embedder = service.get_embedder
    service.get_embedder = lambda: Stub()  # type: ignore[assignment,return-value]
    try:
        large = Workspace.objects.get(id=large_id)
        small = Workspace.objects.get(id=small_ids[0])
        print(f"{'search (excl. query embedding)':<44} {'p50 ms':>7} {'p95 ms':>7}")
        for label, workspace, legs, named in [
            ("large, dense", large, Legs(True, False), False),
            ("large, hybrid (default)", large, Legs(True, True), False),
            ("large, hybrid, widened (2 named resources)", large, Legs(True, True), True),
            ("small, dense", small, Legs(True, False), False),
            ("small, hybrid (default)", small, Legs(True, True), False),
        ]:
            resource_ids = list(workspace.resources.values_list("id", flat=True)[:2]) if named else None
            times: list[float] = []
            for claim in claims[:5]:  # warm caches and the workspace stats
                search(workspace=workspace, query=claim, legs=legs, resource_ids=resource_ids)
            for claim in claims:
                started = time.perf_counter()
                search(workspace=workspace, query=claim, legs=legs, resource_ids=resource_ids)
                times.append((time.perf_counter() - started) * 1000)
            print(f"{label:<44} {percentile(times, 50):>7.1f} {percentile(times, 95):>7.1f}", flush=True)
    finally:
        service.get_embedder = real_get_embedder

    sample = literals[:100]
    from django.db import connection, transaction

    exact_times: list[float] = []
    for vector in sample[:30]:
        with transaction.atomic(), connection.cursor() as cursor:
            started = time.perf_counter()
            dense.nearest(cursor, workspace_id=large_id, vector=vector, limit=5, exact=True)
            exact_times.append((time.perf_counter() - started) * 1000)
    large_count = size - SMALL_WORKSPACES * SMALL
    print(
        f"exact dense search of the large workspace ({large_count:,} passages; the service uses it up to "
        f"{dense.EXACT_MAX_PASSAGES:,}): p50 {percentile(exact_times, 50):.1f} ms, "
        f"p95 {percentile(exact_times, 95):.1f} ms"
    )
    print(f"recall@10 of the index path vs exact, large workspace: {recall_at_10(large_id, sample):.3f}")
    small_recall = statistics.mean(recall_at_10(w, sample[:10]) for w in small_ids[:10])
    print(
        f"recall@10 of the index path vs exact, small workspaces: {small_recall:.3f} "
        f"(the service searches these exactly: recall 1)"
    )
    print(
        f"rows from a plain filtered HNSW scan (ef_search 40, no iterative scan), k=5, small workspace: "
        f"{plain_filtered_rows(small_ids[0], sample[:50]):.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[5_000, 100_000])
    parser.add_argument("--reload", action="store_true", help="load the passages again")
    args = parser.parse_args()

    _django.setup("quality")
    from bench import scifact
    from retrieval.embeddings import get_embedder

    data = scifact.load()
    base = scifact.embeddings(data)
    claims = list(data.queries.values())[:QUERIES]
    embedder = get_embedder()
    embed_times: list[float] = []
    query_vectors = []
    for claim in claims:
        started = time.perf_counter()
        query_vectors.append(embedder.embed_query(claim))
        embed_times.append((time.perf_counter() - started) * 1000)
    print(
        f"query embedding (all-MiniLM-L6-v2, CPU): p50 {percentile(embed_times, 50):.1f} ms, "
        f"p95 {percentile(embed_times, 95):.1f} ms"
    )
    from django.db import connection

    for size in args.sizes:
        connection.close()
        _django.setup_database(f"latency_{size}")
        run_size(size, data, base, np.asarray(query_vectors, dtype=np.float32), claims, args.reload)


if __name__ == "__main__":
    main()
