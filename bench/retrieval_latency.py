#!/usr/bin/env python
"""Search latency and filtered-index recall at 5,000, 100,000 and 1,000,000 passages.

    .venv/bin/python bench/retrieval_latency.py                        # 5,000 and 100,000
    .venv/bin/python bench/retrieval_latency.py --sizes 5000           # one size
    nice -n 10 .venv/bin/python bench/retrieval_latency.py --sizes 1000000
    nice -n 10 .venv/bin/python bench/retrieval_latency.py --sizes 1000000 --filtered

Layout below 1,000,000 passages: 100 small workspaces of SMALL passages
each (two resources of ten) and one large workspace with the rest. From
1,000,000 on, the multi-tenant layout (:func:`tenant_plan`): 10,000
workspaces, three very large ones (30%, 15% and 5% of the passages), one of
12,000 passages (just past the exact-search limit) and 9,996 whose sizes
follow a log-normal distribution (median about 16, a long tail into the
thousands). Everything lives in one table, in the database
``daneshyar_bench_latency_<size>`` (kept between runs; ``--reload`` loads
again). Loading is :mod:`bench.bulk_load`: binary COPY without indexes or
triggers, then the lexeme counts, the b-tree and GIN indexes, each
workspace past ``OWN_INDEX_MIN_PASSAGES`` its own HNSW index (as the
periodic task builds it) and the shared HNSW index (``--no-shared-index``
skips it). Passage vectors are SciFact abstract embeddings plus Gaussian
noise, re-normalised (so the index sees realistic, clustered data, not
uniform random vectors); texts are the matching abstracts, so the lexical
leg works on real words. Queries are SciFact claims.

Figures: load and index build times, table and index sizes, p50/p95 of
``retrieval.search.search`` (dense, hybrid, hybrid with two named
resources) with the query embedding taken out (a precomputed vector is
served), the query embedding itself measured separately, recall@10 of the
dense leg's index path against exact search, and the load average; also
written to ``bench/results/retrieval_latency_<size>.json`` (``--no-json``:
not).

``--filtered``: instead, metadata filters on the largest workspace (300,000
passages at 1,000,000). Every resource of the workspaces searched through
an index gets ``{"shard": "<n mod 100>", "tenth": "<n mod 10>"}`` (one
UPDATE, kept), so ``shard = "7"`` keeps 1 % of the workspace's passages and
``tenth = "7"`` 10 %; then p50/p95 of dense and hybrid search unfiltered
and with each filter (the warm-up searches' results checked: ``top_k``
passages, each of a matching resource), which statement the planner runs for
the filtered dense leg, recall@10 of ``search()``'s dense leg as the
service serves the filter (narrowing included) against the same search
made exact, and recall@10 of the filtered dense leg's statement against
exact filtered search: as ``dense.nearest`` runs it, and with the HNSW
index forced (what pgvector's iterative scan alone finds, without the
exact repeat of a short scan). Written to
``bench/results/retrieval_latency_filtered_<size>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django
from bench.scifact import SciFact

if TYPE_CHECKING:
    from retrieval.filters import Access
    from workspaces.models import Workspace

SMALL_WORKSPACES = 100
SMALL = 20  # passages in each small workspace
QUERIES = 200


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


TENANT_LAYOUT_FROM = 1_000_000  # sizes from here use tenant_plan()
TENANT_WORKSPACES = 10_000
LARGE_SHARES = (0.30, 0.15, 0.05)  # the very large workspaces' shares of all passages
MID = 12_000  # just past dense.EXACT_MAX_PASSAGES: index path, about 1% of the index
RESULTS = Path(__file__).resolve().parent / "results"


@dataclass
class LoadResult:
    ids: dict[str, uuid.UUID]
    steps: dict[str, float]  # seconds per loading step (empty when the data was kept)


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


def load(size: int, base: np.ndarray, texts: list[str], *, reload: bool, shared_index: bool) -> LoadResult:
    """Fill the bench database with ``size`` passages (once); workspace ids by name, step times."""
    from django.db import connection

    from bench import bulk_load
    from retrieval.models import Passage
    from workspaces.models import Organization, Workspace

    plan = plan_for(size)
    assert sum(count for _, count in plan) == size
    organization, _ = Organization.objects.get_or_create(name="bench-latency")
    if Passage.objects.count() == size and not reload:
        ids = dict(Workspace.objects.filter(organization=organization).values_list("name", "id"))
        return LoadResult(ids=ids, steps={})
    with connection.cursor() as cursor:
        # TRUNCATE skips the DELETE triggers, so the counts go with it.
        cursor.execute("TRUNCATE retrieval_passage, retrieval_workspacelexeme, resources_resource CASCADE")
    Workspace.objects.filter(organization=organization).delete()
    created = Workspace.objects.bulk_create(
        Workspace(organization=organization, name=name) for name, _ in plan
    )
    ids = {w.name: w.id for w in created}
    started = time.perf_counter()
    steps = bulk_load.load(
        [(ids[name], count) for name, count in plan], base, texts, shared_index=shared_index
    )
    steps["total"] = round(time.perf_counter() - started, 1)
    print(f"  loaded and indexed {size:,} passages in {steps['total']:.0f} s", flush=True)
    return LoadResult(ids=ids, steps=steps)


def sizes_report() -> dict[str, int]:
    """Bytes of the table, its indexes (the workspaces' own HNSW indexes together) and the database."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_table_size('retrieval_passage'),"
            " coalesce(pg_relation_size(to_regclass('passage_embedding_hnsw')), 0),"
            " (SELECT coalesce(sum(pg_relation_size(c.oid)), 0) FROM pg_class c"
            "  WHERE c.relname LIKE 'passage\\_hnsw\\_ws\\_%'),"
            " pg_relation_size('passage_search_vector_gin'),"
            " pg_relation_size('passage_ws_resource_idx'),"
            " pg_total_relation_size('retrieval_workspacelexeme'),"
            " pg_database_size(current_database())"
        )
        row = cursor.fetchone()
    names = ("passages_table", "shared_hnsw", "own_hnsw", "gin", "btree", "lexeme_counts", "database")
    sizes = {name: int(value) for name, value in zip(names, row, strict=True)}
    print("sizes: " + ", ".join(f"{name} {value / 1024 / 1024:,.0f} MB" for name, value in sizes.items()))
    return sizes


def recall_at_10(workspace_id: uuid.UUID, vectors: list[str]) -> float:
    from django.conf import settings
    from django.db import connection, transaction

    from retrieval.search import dense

    model = settings.EMBEDDING_MODEL_NAME
    hits = total = 0
    for vector in vectors:
        with transaction.atomic(), connection.cursor() as cursor:
            exact = set(
                dense.nearest(
                    cursor, workspace_id=workspace_id, model=model, vector=vector, limit=10, exact=True
                )
            )
            cursor.execute("SET LOCAL enable_sort = off")  # the index path, whatever the planner prefers
            found = set(
                dense.nearest(
                    cursor, workspace_id=workspace_id, model=model, vector=vector, limit=10, exact=False
                )
            )
        hits += len(exact & found)
        total += len(exact)
    return hits / total


def plain_filtered_rows(workspace_id: uuid.UUID, vectors: list[str], k: int = 5) -> float:
    """Mean rows a filtered HNSW scan with pgvector's defaults returns (no iterative scan)."""
    from django.conf import settings
    from django.db import connection, transaction

    from retrieval.search import statements

    rows = []
    for vector in vectors:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_sort = off")
            cursor.execute("SET LOCAL hnsw.iterative_scan = off")
            cursor.execute("SET LOCAL hnsw.ef_search = 40")
            cursor.execute(
                statements.nearest(exact=False),
                {
                    "vector": vector,
                    "workspace": workspace_id,
                    "model": settings.EMBEDDING_MODEL_NAME,
                    "limit": k,
                },
            )
            rows.append(len(cursor.fetchall()))
    return statistics.mean(rows)


# The filters of --filtered, by the share of the workspace's passages they keep.
FILTERS: dict[str, dict[str, object]] = {
    "1%": {"type": "eq", "key": "shard", "value": "7"},
    "10%": {"type": "eq", "key": "tenth", "value": "7"},
}


def metadata_assign(workspace_ids: list[uuid.UUID]) -> float:
    """Give the resources of ``workspace_ids`` their shard metadata (once); seconds taken."""
    from django.db import connection

    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM resources_resource WHERE workspace_id = ANY(%s) AND NOT metadata ? 'shard'",
            [workspace_ids],
        )
        (missing,) = cursor.fetchone()
        if not missing:
            return 0.0
        # Numbered in id order (random uuids): every hundredth resource of a
        # workspace in each shard, spread over the workspace's passages.
        cursor.execute(
            """
            UPDATE resources_resource r
            SET metadata = coalesce(r.metadata, '{}'::jsonb)
                || jsonb_build_object('shard', (s.n %% 100)::text, 'tenth', (s.n %% 10)::text)
            FROM (
                SELECT id, row_number() OVER (PARTITION BY workspace_id ORDER BY id) AS n
                FROM resources_resource WHERE workspace_id = ANY(%s)
            ) s
            WHERE r.id = s.id
            """,
            [workspace_ids],
        )
        cursor.execute("VACUUM ANALYZE resources_resource")
    took = time.perf_counter() - started
    print(f"  metadata of {missing:,} resources set in {took:.0f} s", flush=True)
    return round(took, 1)


def filtered_plan(workspace_id: uuid.UUID, vector: str, access: Access, limit: int) -> str:
    """How the planner runs the filtered dense statement: the HNSW index it
    scans, or "exact" (the matching resources' passages through the b-tree)."""
    from django.conf import settings
    from django.db import connection, transaction

    from retrieval.search import dense, statements

    params: dict[str, Any] = {
        "vector": vector,
        "workspace": workspace_id,
        "model": settings.EMBEDDING_MODEL_NAME,
        "limit": limit,
    }
    params.update(access.params())
    with transaction.atomic(), connection.cursor() as cursor:
        dense.index_scan_settings(cursor, limit=limit)
        cursor.execute(
            "EXPLAIN " + statements.nearest(exact=False, access=access.shape).as_string(),
            params,
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    for line in plan.splitlines():
        if "Index Scan using" in line and "hnsw" in line:
            return line.split("Index Scan using", 1)[1].split()[0]
    return "exact"


def filtered_recall(
    workspace_id: uuid.UUID, vectors: list[str], access: Access, *, force_index: bool
) -> tuple[float, float]:
    """recall@10 of the filtered dense leg against exact filtered search, and
    the share of scans that returned fewer than 10 rows. ``force_index``: the
    HNSW statement alone, the index path forced (no exact repeat of a short
    scan); otherwise :func:`dense.nearest` as the service calls it."""
    from django.conf import settings
    from django.db import connection, transaction

    from retrieval.search import dense, statements

    model = settings.EMBEDDING_MODEL_NAME
    hits = total = short = 0
    for vector in vectors:
        with transaction.atomic(), connection.cursor() as cursor:
            exact = set(
                dense.nearest(
                    cursor,
                    workspace_id=workspace_id,
                    model=model,
                    vector=vector,
                    limit=10,
                    exact=True,
                    access=access,
                )
            )
            if force_index:
                cursor.execute("SET LOCAL enable_sort = off")
                cursor.execute("SET LOCAL enable_bitmapscan = off")
                dense.index_scan_settings(cursor, limit=10)
                params: dict[str, Any] = {
                    "vector": vector,
                    "workspace": workspace_id,
                    "model": model,
                    "limit": 10,
                }
                params.update(access.params())
                cursor.execute(
                    statements.nearest(exact=False, access=access.shape).as_string(),
                    params,
                )
                found = {row[0] for row in cursor.fetchall()}
            else:
                found = set(
                    dense.nearest(
                        cursor,
                        workspace_id=workspace_id,
                        model=model,
                        vector=vector,
                        limit=10,
                        exact=False,
                        access=access,
                    )
                )
        hits += len(exact & found)
        total += len(exact)
        short += len(found) < 10
    return hits / total, short / len(vectors)


def service_recall(
    workspace: Workspace, claims: list[str], by_text: dict[str, list[float]], access: Access
) -> float:
    """recall@10 of ``search()``'s dense leg as the service serves the filter
    (the narrowing of retrieval/search/narrowing.py included) against the
    same search made exact (every workspace under the exact-search limit)."""
    from retrieval.search import dense, plan
    from retrieval.search.plan import Legs
    from retrieval.search.service import search

    def precomputed(texts: list[str], **_: object) -> list[np.ndarray]:
        return [np.asarray(by_text[text], dtype=np.float32) for text in texts]

    hits = total = 0
    legs = Legs(True, False)
    with mock.patch.object(plan, "embed_cached", precomputed):
        for claim in claims:
            served = {
                r.passage_id
                for r in search(workspace=workspace, query=claim, legs=legs, access=access, top_k=10)
            }
            with mock.patch.object(dense, "EXACT_MAX_PASSAGES", 10**9):
                exact = {
                    r.passage_id
                    for r in search(workspace=workspace, query=claim, legs=legs, access=access, top_k=10)
                }
            hits += len(served & exact)
            total += len(exact)
    return hits / total if total else 1.0


def filtered_timings(
    workspace: Workspace, claims: list[str], by_text: dict[str, list[float]], accesses: dict[str, Access]
) -> dict[str, float]:
    """p50/p95 ms of search() per leg and filter, the query embedding served
    precomputed; the warm-up searches' results checked against the filter."""
    from resources.models import Resource
    from retrieval.filters import OPEN
    from retrieval.search import plan
    from retrieval.search.plan import Legs
    from retrieval.search.service import search

    def precomputed(texts: list[str], **_: object) -> list[np.ndarray]:
        return [np.asarray(by_text[text], dtype=np.float32) for text in texts]

    matching = {
        name: set(
            Resource.objects.filter(workspace=workspace, **{f"metadata__{f['key']}": f["value"]}).values_list(
                "id", flat=True
            )
        )
        for name, f in FILTERS.items()
    }
    figures: dict[str, float] = {}
    with mock.patch.object(plan, "embed_cached", precomputed):
        for leg, legs in (("dense", Legs(True, False)), ("hybrid", Legs(True, True))):
            for name, access in [("unfiltered", None), *accesses.items()]:
                chosen = access or OPEN
                for claim in claims[:5]:  # warm caches and the workspace stats
                    found = search(workspace=workspace, query=claim, legs=legs, access=chosen)
                    assert len(found) == workspace.top_k, (leg, name, len(found))
                    if access is not None:
                        assert all(r.resource_id in matching[name] for r in found), (leg, name)
                times: list[float] = []
                for claim in claims:
                    started = time.perf_counter()
                    search(workspace=workspace, query=claim, legs=legs, access=chosen)
                    times.append((time.perf_counter() - started) * 1000)
                figures[f"{leg}_{name}_p50_ms"] = round(percentile(times, 50), 1)
                figures[f"{leg}_{name}_p95_ms"] = round(percentile(times, 95), 1)
                print(
                    f"  {leg:<7} {name:<11} p50 {figures[f'{leg}_{name}_p50_ms']:>7.1f} ms"
                    f"  p95 {figures[f'{leg}_{name}_p95_ms']:>7.1f} ms",
                    flush=True,
                )
    return figures


def run_filtered(
    size: int,
    ids: dict[str, uuid.UUID],
    literals: list[str],
    claims: list[str],
    by_text: dict[str, list[float]],
) -> dict[str, object]:
    """--filtered: the largest workspace unfiltered and with each of :data:`FILTERS`."""
    from retrieval.filter_grammar import filters_parse
    from retrieval.filters import Access
    from retrieval.search import dense
    from workspaces.models import Workspace

    counts = dict(plan_for(size))
    indexed = [ids[name] for name, count in counts.items() if count > dense.EXACT_MAX_PASSAGES]
    metadata_seconds = metadata_assign(indexed)
    name = labelled_workspaces(size)[0][0][1]
    workspace = Workspace.objects.get(id=ids[name])
    accesses = {label: Access(filters=filters_parse(f)) for label, f in FILTERS.items()}
    print(f"\n== filters on the workspace of {counts[name]:,} passages ({size:,} in all) ==", flush=True)
    load_before = os.getloadavg()
    figures = filtered_timings(workspace, claims, by_text, accesses)
    filters: dict[str, object] = {}
    for label, access in accesses.items():
        plan = filtered_plan(workspace.id, literals[0], access, workspace.top_k)
        served, served_short = filtered_recall(workspace.id, literals[:100], access, force_index=False)
        forced, forced_short = filtered_recall(workspace.id, literals[:100], access, force_index=True)
        as_served = service_recall(workspace, claims[:100], by_text, access)
        filters[label] = {
            "service_recall_at_10": round(as_served, 3),
            "filter": FILTERS[label],
            "planner_path": plan,
            "recall_at_10": round(served, 3),
            "short_scans": round(served_short, 3),
            "index_forced_recall_at_10": round(forced, 3),
            "index_forced_short_scans": round(forced_short, 3),
        }
        print(
            f"  {label} filter: search() recall@10 vs the same search exact {as_served:.3f};"
            f" dense leg alone: planner path {plan}, recall@10 vs exact filtered {served:.3f}"
            f" (index forced {forced:.3f}, scans short of 10: {forced_short:.0%})",
            flush=True,
        )
    load_avg = [round(max(a, b), 2) for a, b in zip(load_before, os.getloadavg(), strict=True)]
    print(f"load average (1, 5, 15 min; the higher of start and end): {load_avg}")
    return {
        "passages": size,
        "workspace_passages": counts[name],
        "hnsw_ef_search": dense.HNSW_EF_SEARCH,
        "hnsw_max_scan_tuples": dense.HNSW_MAX_SCAN_TUPLES,
        **figures,
        "filters": filters,
        "metadata_seconds": metadata_seconds,
        "load_avg": load_avg,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def labelled_workspaces(size: int) -> tuple[list[tuple[str, str]], list[str]]:
    """(label, workspace name) of the measured workspaces, and small ones for the recall check."""
    plan = plan_for(size)
    if size < TENANT_LAYOUT_FROM:
        return [("large", "large"), ("small", "small-000")], [f"small-{i:03d}" for i in range(10)]
    print(
        f"\n== {size:,} passages: {len(plan):,} workspaces; largest {plan[0][1]:,}, "
        f"{plan[1][1]:,}, {plan[2][1]:,}; one of {MID:,}; the rest median "
        f"{int(np.median([c for _, c in plan[4:]]))}, max {max(c for _, c in plan[4:]):,} ==",
        flush=True,
    )
    others = list(plan[4:])
    exact_edge = max(others, key=lambda item: item[1])[0]  # the largest exactly-searched one
    small = min(others, key=lambda item: (abs(item[1] - SMALL), item[0]))[0]
    labelled = [("large", "large-0"), ("mid", "mid"), ("exact edge", exact_edge), ("small", small)]
    return labelled, [name for name, count in others if count >= 10][:10]


def timings(workspace: object, claims: list[str], by_text: dict[str, list[float]]) -> dict[str, float]:
    """p50/p95 ms of search() per case, with the query embedding served precomputed."""
    from retrieval.search import plan
    from retrieval.search.plan import Legs
    from retrieval.search.service import search

    def precomputed(texts: list[str], **_: object) -> list[np.ndarray]:  # embedding is timed separately
        return [np.asarray(by_text[text], dtype=np.float32) for text in texts]

    figures: dict[str, float] = {}
    named = list(workspace.resources.values_list("id", flat=True)[:2])  # type: ignore[attr-defined]
    cases: list[tuple[str, Legs, list[uuid.UUID] | None]] = [
        ("dense", Legs(True, False), None),
        ("hybrid", Legs(True, True), None),
    ]
    cases.append(("hybrid_widened", Legs(True, True), named))
    with mock.patch.object(plan, "embed_cached", precomputed):
        for case, legs, resource_ids in cases:
            times: list[float] = []
            for claim in claims[:5]:  # warm caches and the workspace stats
                search(workspace=workspace, query=claim, legs=legs, resource_ids=resource_ids)  # type: ignore[arg-type]
            for claim in claims:
                started = time.perf_counter()
                search(workspace=workspace, query=claim, legs=legs, resource_ids=resource_ids)  # type: ignore[arg-type]
                times.append((time.perf_counter() - started) * 1000)
            figures[f"{case}_p50_ms"] = round(percentile(times, 50), 1)
            figures[f"{case}_p95_ms"] = round(percentile(times, 95), 1)
    return figures


def run_size(
    size: int,
    data: SciFact,
    base: np.ndarray,
    query_vectors: np.ndarray,
    claims: list[str],
    args: argparse.Namespace,
) -> dict[str, object]:
    from retrieval import workspace_index
    from retrieval.search import dense
    from workspaces.models import Workspace

    counts = dict(plan_for(size))
    labelled, small_names = labelled_workspaces(size)
    if size < TENANT_LAYOUT_FROM:
        print(f"\n== {size:,} passages: 1 large workspace + {SMALL_WORKSPACES} of {SMALL} ==", flush=True)
    texts = [f"{d['title']}\n\n{d['text']}" for d in data.corpus]
    loaded = load(size, base, texts, reload=args.reload, shared_index=not args.no_shared_index)
    ids = loaded.ids
    sizes = sizes_report()
    literals = [dense.vector_literal(v) for v in query_vectors]
    by_text: dict[str, list[float]] = dict(zip(claims, query_vectors.tolist(), strict=True))
    if args.filtered:
        return run_filtered(size, ids, literals, claims, by_text)
    load_before = os.getloadavg()
    workspaces: list[dict[str, object]] = []
    print(
        f"{'search (excl. query embedding), ms':<40} {'dense p50/p95':>15}"
        f" {'hybrid p50/p95':>15} {'recall@10':>9}"
    )
    for label, name in labelled:
        workspace = Workspace.objects.get(id=ids[name])
        figures = timings(workspace, claims, by_text)
        exact = counts[name] <= dense.EXACT_MAX_PASSAGES
        recall = 1.0 if exact else recall_at_10(ids[name], literals[:100])
        own = workspace_index.has_own_index(ids[name])
        path = "exact" if exact else ("own HNSW index" if own else "shared HNSW index")
        workspaces.append(
            {
                "label": label,
                "passages": counts[name],
                "path": path,
                **figures,
                "recall_at_10": round(recall, 3),
            }
        )
        print(
            f"{label + f' ({counts[name]:,}, {path})':<40}"
            f" {figures['dense_p50_ms']:>7.1f}/{figures['dense_p95_ms']:<7.1f}"
            f" {figures['hybrid_p50_ms']:>7.1f}/{figures['hybrid_p95_ms']:<7.1f} {recall:>9.3f}",
            flush=True,
        )
    small_recall = statistics.mean(recall_at_10(ids[n], literals[:10]) for n in small_names)
    print(f"recall@10 of the index path vs exact, small workspaces (searched exactly: 1): {small_recall:.3f}")
    load_avg = [round(max(a, b), 2) for a, b in zip(load_before, os.getloadavg(), strict=True)]
    print(f"load average (1, 5, 15 min; the higher of start and end): {load_avg}")
    return {
        "passages": size,
        "hnsw_ef_search": dense.HNSW_EF_SEARCH,
        "workspaces": workspaces,
        "small_workspaces_index_path_recall_at_10": round(small_recall, 3),
        "build_seconds": loaded.steps,
        "sizes_bytes": sizes,
        "load_avg": load_avg,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[5_000, 100_000])
    parser.add_argument("--reload", action="store_true", help="load the passages again")
    parser.add_argument(
        "--no-shared-index", action="store_true", help="skip the shared HNSW index when loading"
    )
    parser.add_argument(
        "--ef-search", type=int, default=0, help="hnsw.ef_search of the index path (default: the service's)"
    )
    parser.add_argument(
        "--filtered",
        action="store_true",
        help="metadata filters on the largest workspace instead of the per-workspace table",
    )
    parser.add_argument(
        "--no-json", action="store_true", help="do not write bench/results/retrieval_latency_<size>.json"
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
        query_vectors.append(embedder.embed_queries([claim])[0])
        embed_times.append((time.perf_counter() - started) * 1000)
    print(
        f"query embedding (all-MiniLM-L6-v2, CPU): p50 {percentile(embed_times, 50):.1f} ms, "
        f"p95 {percentile(embed_times, 95):.1f} ms"
    )
    from django.db import connection

    for size in args.sizes:
        connection.close()
        _django.setup_database(f"latency_{size}")
        result = run_size(size, data, base, np.asarray(query_vectors, dtype=np.float32), claims, args)
        if not args.no_json:
            RESULTS.mkdir(exist_ok=True)
            stem = "retrieval_latency_filtered" if args.filtered else "retrieval_latency"
            (RESULTS / f"{stem}_{size}.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
