#!/usr/bin/env python
"""Search latency and filtered-index recall at 5,000, 100,000 and 1,000,000 passages.

    .venv/bin/python bench/retrieval_latency.py                        # 5,000 and 100,000
    .venv/bin/python bench/retrieval_latency.py --sizes 5000           # one size
    nice -n 10 .venv/bin/python bench/retrieval_latency.py --sizes 1000000

Layout below 1,000,000 passages: 100 small workspaces of SMALL passages
each (two resources of ten) and one large workspace with the rest. From
1,000,000 on, the multi-tenant layout (:func:`tenant_plan`): 10,000
workspaces, three very large ones (30%, 15% and 5% of the passages), one of
12,000 passages (just past the exact-search limit, so on the index path as a
small share of the index) and 9,996 whose sizes follow a log-normal
distribution (median about 16, a long tail into the thousands). Everything
lives in one table and one HNSW index, in the database
``daneshyar_bench_latency_<size>`` (kept between runs). Passage vectors are
SciFact abstract embeddings plus Gaussian noise, re-normalised (so the index
sees realistic, clustered data, not uniform random vectors); texts are the
matching abstracts, so the lexical leg works on real words. Queries are
SciFact claims.

Figures: load and index build times, table and index sizes, p50/p95 of
``retrieval.search.search`` with the query embedding taken out (a
precomputed vector is served), the query embedding itself measured
separately, and recall@10 of the dense leg's index path against exact
search.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django
from bench.scifact import SciFact

SMALL_WORKSPACES = 100
SMALL = 20  # passages in each small workspace
PER_RESOURCE = 10
NOISE = 0.03  # per-dimension sigma: cosine to the source abstract about 0.85
QUERIES = 200


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


TENANT_LAYOUT_FROM = 1_000_000  # sizes from here use tenant_plan()
TENANT_WORKSPACES = 10_000
LARGE_SHARES = (0.30, 0.15, 0.05)  # the very large workspaces' shares of all passages
MID = 12_000  # just past dense.EXACT_MAX_PASSAGES: index path, about 1% of the index
COPY_ROWS = 100_000  # passages per COPY statement (bounds the lexeme trigger's batch)


def legacy_plan(size: int) -> list[tuple[str, int]]:
    return [("large", size - SMALL_WORKSPACES * SMALL)] + [
        (f"small-{i:03d}", SMALL) for i in range(SMALL_WORKSPACES)
    ]


def tenant_plan(size: int, workspaces: int = TENANT_WORKSPACES) -> list[tuple[str, int]]:
    """Workspace names and passage counts for the multi-tenant layout (sums to ``size``)."""
    fixed = [(f"large-{i}", int(size * share)) for i, share in enumerate(LARGE_SHARES)]
    fixed.append(("mid", MID))
    rest = size - sum(count for _, count in fixed)
    others = workspaces - len(fixed)
    rng = np.random.default_rng(11)
    weights = rng.lognormal(mean=0.0, sigma=1.5, size=others)
    counts = np.maximum(5, np.floor(weights / weights.sum() * rest)).astype(int)
    counts = np.minimum(counts, dense_exact_max() - 1)
    counts[np.argmax(counts)] += rest - int(counts.sum())  # exact total
    return fixed + [(f"ws-{i:05d}", int(c)) for i, c in enumerate(counts)]


def dense_exact_max() -> int:
    from retrieval.search import dense

    return dense.EXACT_MAX_PASSAGES


def plan_for(size: int) -> list[tuple[str, int]]:
    return tenant_plan(size) if size >= TENANT_LAYOUT_FROM else legacy_plan(size)


def load(size: int, base: np.ndarray, texts: list[str], reload: bool) -> dict[str, uuid.UUID]:
    """Fill the bench database with ``size`` passages (once); workspace ids by name."""
    from django.db import connection

    from resources.models import ResourceStatus
    from retrieval.models import Passage
    from workspaces.models import Organization, Workspace

    plan = plan_for(size)
    assert sum(count for _, count in plan) == size
    organization, _ = Organization.objects.get_or_create(name="bench-latency")
    if Passage.objects.count() == size and not reload:
        return dict(Workspace.objects.filter(organization=organization).values_list("name", "id"))
    with connection.cursor() as cursor:
        # TRUNCATE skips the DELETE triggers, so the counts go with it.
        cursor.execute("TRUNCATE retrieval_passage, retrieval_workspacelexeme, resources_resource CASCADE")
    Workspace.objects.filter(organization=organization).delete()
    created = Workspace.objects.bulk_create(
        Workspace(organization=organization, name=name) for name, _ in plan
    )
    ids = {w.name: w.id for w in created}
    rng = np.random.default_rng(7)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        # Bulk load without indexes, then build them once (much faster than
        # maintaining HNSW row by row). Same definitions as the migrations.
        cursor.execute("DROP INDEX IF EXISTS passage_embedding_hnsw")
        cursor.execute("DROP INDEX IF EXISTS passage_search_vector_gin")
        now = time.strftime("%Y-%m-%d %H:%M:%S+00")
        documents: list[tuple[uuid.UUID, uuid.UUID, int]] = []  # (resource, workspace, passages)
        for name, count in plan:
            for start in range(0, count, PER_RESOURCE):
                documents.append((uuid.uuid4(), ids[name], min(PER_RESOURCE, count - start)))
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
        rows = 0
        copy_sql = (
            "COPY retrieval_passage (id, workspace_id, resource_id, ordinal, text, char_start, char_end,"
            " page, token_count, embedding, embedding_model, created_at) FROM STDIN"
        )
        # Several COPY statements: the statement-level lexeme trigger then
        # aggregates COPY_ROWS passages at a time instead of all at once.
        for first in range(0, len(documents), COPY_ROWS // PER_RESOURCE):
            with raw.copy(copy_sql) as copy:
                for resource_id, workspace_id, count in documents[first : first + COPY_ROWS // PER_RESOURCE]:
                    noise = rng.normal(scale=NOISE, size=(count, base.shape[1]))
                    for ordinal in range(count):
                        i = source % len(clean)
                        vector = base[i] + noise[ordinal]
                        vector /= np.linalg.norm(vector)
                        text = clean[i]
                        copy.write(
                            f"{uuid.uuid4()}\t{workspace_id}\t{resource_id}\t{ordinal}\t{text}\t0\t"
                            f"{len(text)}\t\\N\t{len(text.split())}\t"
                            f"[{','.join(f'{x:.5f}' for x in vector)}]\tbench\t{now}\n"
                        )
                        source += 1
            rows = source
            if size >= TENANT_LAYOUT_FROM:
                print(f"    {rows:,} passages after {time.perf_counter() - started:.0f} s", flush=True)
        print(f"  loaded {size:,} passages in {time.perf_counter() - started:.0f} s", flush=True)
        started = time.perf_counter()
        # The graph must fit in maintenance_work_mem or the build slows down
        # badly: about 2 kB a 384-dimensional passage.
        memory_mb = max(1024, size * 2 // 1024 + 512)
        cursor.execute(f"SET maintenance_work_mem = '{memory_mb}MB'")
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        cursor.execute(
            "CREATE INDEX passage_embedding_hnsw ON retrieval_passage"
            " USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
        )
        print(
            f"  HNSW index built in {time.perf_counter() - started:.0f} s"
            f" (maintenance_work_mem {memory_mb} MB, 2 processes)",
            flush=True,
        )
        started = time.perf_counter()
        cursor.execute(
            "CREATE INDEX passage_search_vector_gin ON retrieval_passage USING gin (search_vector)"
        )
        print(f"  GIN index built in {time.perf_counter() - started:.0f} s", flush=True)
        cursor.execute("VACUUM ANALYZE retrieval_passage")
        cursor.execute("VACUUM ANALYZE resources_resource")
        cursor.execute("VACUUM ANALYZE retrieval_workspacelexeme")
    return ids


def sizes_report() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_size_pretty(pg_table_size('retrieval_passage')),"
            " pg_size_pretty(pg_relation_size('passage_embedding_hnsw')),"
            " pg_size_pretty(pg_relation_size('passage_search_vector_gin')),"
            " pg_size_pretty(pg_relation_size('passage_ws_resource_idx')),"
            " pg_size_pretty(pg_total_relation_size('retrieval_workspacelexeme')),"
            " pg_size_pretty(pg_database_size(current_database()))"
        )
        table, hnsw, gin, btree, lexemes, database = cursor.fetchone()
    print(
        f"sizes: passages table {table}, HNSW {hnsw}, GIN {gin}, (workspace, resource) b-tree {btree},"
        f" lexeme counts {lexemes}; database {database}"
    )


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
    size: int, data: SciFact, base: np.ndarray, query_vectors: np.ndarray, claims: list[str], reload: bool
) -> None:
    from django.db import connection, transaction

    from retrieval.search import dense, service
    from retrieval.search.service import Legs, search
    from workspaces.models import Workspace

    plan = plan_for(size)
    counts = dict(plan)
    tenant = size >= TENANT_LAYOUT_FROM
    if tenant:
        print(
            f"\n== {size:,} passages: {len(plan):,} workspaces; largest {plan[0][1]:,}, "
            f"{plan[1][1]:,}, {plan[2][1]:,}; one of {MID:,}; the rest median "
            f"{int(np.median([c for _, c in plan[4:]]))}, max {max(c for _, c in plan[4:]):,} ==",
            flush=True,
        )
    else:
        print(f"\n== {size:,} passages: 1 large workspace + {SMALL_WORKSPACES} of {SMALL} ==", flush=True)
    texts = [f"{d['title']}\n\n{d['text']}" for d in data.corpus]
    ids = load(size, base, texts, reload)
    sizes_report()
    literals = [dense.vector_literal(v) for v in query_vectors]
    by_text: dict[str, list[float]] = dict(zip(claims, query_vectors.tolist(), strict=True))
    if tenant:
        others = [(name, count) for name, count in plan[4:]]
        exact_edge = max(others, key=lambda item: item[1])[0]  # the largest exactly-searched one
        small = min(others, key=lambda item: (abs(item[1] - SMALL), item[0]))[0]
        labelled = [("large", "large-0"), ("mid", "mid"), ("exact edge", exact_edge), ("small", small)]
        small_names = [name for name, count in others if count >= 10][:10]
    else:
        labelled = [("large", "large"), ("small", "small-000")]
        small_names = [f"small-{i:03d}" for i in range(10)]

    class Stub:  # serves the precomputed query vector: embedding is timed separately
        def embed_query(self, text: str) -> list[float]:
            return by_text[text]

    with mock.patch.object(service, "get_embedder", Stub):
        print(f"{'search (excl. query embedding)':<52} {'p50 ms':>7} {'p95 ms':>7}")
        for label, name in labelled:
            workspace = Workspace.objects.get(id=ids[name])
            cases = [(f"{label} ({counts[name]:,}), dense", Legs(True, False), False)]
            cases.append((f"{label} ({counts[name]:,}), hybrid (default)", Legs(True, True), False))
            if label == "large":
                cases.append((f"{label}, hybrid, widened (2 named resources)", Legs(True, True), True))
            for case, legs, named in cases:
                resource_ids = list(workspace.resources.values_list("id", flat=True)[:2]) if named else None
                times: list[float] = []
                for claim in claims[:5]:  # warm caches and the workspace stats
                    search(workspace=workspace, query=claim, legs=legs, resource_ids=resource_ids)
                for claim in claims:
                    started = time.perf_counter()
                    search(workspace=workspace, query=claim, legs=legs, resource_ids=resource_ids)
                    times.append((time.perf_counter() - started) * 1000)
                print(f"{case:<52} {percentile(times, 50):>7.1f} {percentile(times, 95):>7.1f}", flush=True)

    sample = literals[:100]
    large_name = labelled[0][1]
    exact_times: list[float] = []
    for vector in sample[:30]:
        with transaction.atomic(), connection.cursor() as cursor:
            started = time.perf_counter()
            dense.nearest(cursor, workspace_id=ids[large_name], vector=vector, limit=5, exact=True)
            exact_times.append((time.perf_counter() - started) * 1000)
    print(
        f"exact dense search of the large workspace ({counts[large_name]:,} passages; the service uses it up "
        f"to {dense.EXACT_MAX_PASSAGES:,}): p50 {percentile(exact_times, 50):.1f} ms, "
        f"p95 {percentile(exact_times, 95):.1f} ms"
    )
    print(
        f"recall@10 of the index path vs exact, large workspace: {recall_at_10(ids[large_name], sample):.3f}"
    )
    if tenant:
        mid_recall = recall_at_10(ids["mid"], sample)
        print(f"recall@10 of the index path vs exact, mid workspace ({MID:,}): {mid_recall:.3f}")
    small_recall = statistics.mean(recall_at_10(ids[n], sample[:10]) for n in small_names)
    print(
        f"recall@10 of the index path vs exact, small workspaces: {small_recall:.3f} "
        f"(the service searches these exactly: recall 1)"
    )
    print(
        f"rows from a plain filtered HNSW scan (ef_search 40, no iterative scan), k=5, small workspace: "
        f"{plain_filtered_rows(ids[small_names[0]], sample[:50]):.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[5_000, 100_000])
    parser.add_argument("--reload", action="store_true", help="load the passages again")
    parser.add_argument(
        "--ef-search", type=int, default=0, help="hnsw.ef_search of the index path (default: the service's)"
    )
    args = parser.parse_args()

    _django.setup("quality")
    from bench import scifact
    from retrieval.embeddings import get_embedder
    from retrieval.search import dense

    if args.ef_search:
        dense.HNSW_EF_SEARCH = args.ef_search
    print(f"hnsw.ef_search {dense.HNSW_EF_SEARCH} on the index path")
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
