#!/usr/bin/env python
"""SciFact retrieval quality of the search service: nDCG@10 and recall@5.

    .venv/bin/python bench/retrieval_quality.py           # the three configurations
    .venv/bin/python bench/retrieval_quality.py --sweep   # fusion variants, from the legs

Every figure goes through ``retrieval.search.search`` on a workspace holding
the 5,183 abstracts (one resource, one passage each), in its own database
``daneshyar_bench_quality``. ``--sweep`` takes each leg's candidate lists
from the service's own leg functions once per query and compares fusion
rules offline (that is how DENSE_WEIGHT and CANDIDATES were chosen).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django

REFERENCE = {  # shared/datasets/scifact/README.md (exact search, plain BM25, RRF k=60)
    "dense": (0.660, 0.735),
    "lexical": (0.664, 0.717),
    "hybrid": (0.694, 0.758),
}


def ndcg_at_10(ranked: Sequence[str], relevant: set[str]) -> float:
    dcg = sum(1.0 / math.log2(i + 2) for i, doc in enumerate(ranked[:10]) if doc in relevant)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    return dcg / ideal


def recall_at_5(ranked: Sequence[str], relevant: set[str]) -> float:
    return len(set(ranked[:5]) & relevant) / len(relevant)


def evaluate(
    run: Callable[[str], list[str]], queries: dict[str, str], qrels: dict[str, set[str]]
) -> tuple[float, float]:
    ndcg = recall = 0.0
    for query_id, text in queries.items():
        ranked = run(text)
        ndcg += ndcg_at_10(ranked, qrels[query_id])
        recall += recall_at_5(ranked, qrels[query_id])
    return ndcg / len(queries), recall / len(queries)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sweep", action="store_true", help="compare fusion rules offline")
    parser.add_argument("--limit", type=int, default=0, help="only the first N queries (quick checks)")
    parser.add_argument(
        "--through-evaluation",
        action="store_true",
        help="then each configuration's figures through the evaluation API, side by side",
    )
    parser.add_argument(
        "--corpus",
        type=int,
        default=0,
        help="only N abstracts: those relevant to the queries, then the first others (a slow model; "
        "compare models on the same sample, not with the full corpus's figures)",
    )
    args = parser.parse_args()

    _django.setup("quality")
    from django.conf import settings

    from bench import scifact
    from retrieval.models import Passage
    from retrieval.search.plan import Legs
    from retrieval.search.service import search

    configurations = [
        ("dense", Legs(dense=True, lexical=False)),
        ("lexical", Legs(dense=False, lexical=True)),
        ("hybrid", Legs(dense=True, lexical=True)),
    ]

    data = scifact.sample(scifact.load(), queries=args.limit, corpus=args.corpus)
    started = time.perf_counter()
    vectors = scifact.embeddings(data)
    workspace = scifact.load_workspace(
        data, vectors, name=f"scifact-{args.corpus}" if args.corpus else "scifact"
    )
    print(
        f"corpus {len(data.corpus)} abstracts, {len(data.queries)} queries, "
        f"model {settings.EMBEDDING_MODEL_NAME} ({settings.EMBEDDING_BACKEND}); ready in "
        f"{time.perf_counter() - started:.0f} s"
    )
    corpus_id = dict(Passage.objects.filter(workspace=workspace).values_list("id", "resource__filename"))
    queries = data.queries

    if args.sweep:
        from bench import fusion_sweep

        fusion_sweep.run(workspace, queries, data.qrels, corpus_id, evaluate)
        return

    print(f"\n{'method':<10} {'nDCG@10':>8} {'recall@5':>9}   reference nDCG@10 / recall@5   ms/query")
    figures = {}
    for name, legs in configurations:

        def run(text: str, legs: Legs = legs) -> list[str]:
            return [
                corpus_id[p.passage_id] for p in search(workspace=workspace, query=text, top_k=10, legs=legs)
            ]

        started = time.perf_counter()
        ndcg, recall = evaluate(run, queries, data.qrels)
        per_query = (time.perf_counter() - started) * 1000 / len(queries)
        ref = REFERENCE[name]
        figures[name] = (ndcg, recall)
        print(
            f"{name:<10} {ndcg:>8.3f} {recall:>9.3f}   {ref[0]:.3f} / {ref[1]:.3f}{'':>17}{per_query:>6.1f}"
        )
    if args.through_evaluation:
        through_evaluation(workspace, queries, data.qrels, figures, configurations)


def through_evaluation(
    workspace: Any,
    queries: dict[str, str],
    qrels: dict[str, set[str]],
    figures: dict[str, tuple[float, float]],
    configurations: list[tuple[str, Any]],
) -> None:
    """The queries as a test set of the workspace (the qrels as the expected
    documents), run through ``POST …/evaluations/`` under each configuration
    of the legs (RETRIEVAL_DENSE, RETRIEVAL_LEXICAL: the turn searches with
    the configured legs) with the workspace's top_k at 10 and k = 10: the
    run's ndcg_at_k and recall_at["5"] beside the bench's (bench/through_evaluation.py)."""
    from django.conf import settings

    from bench import through_evaluation as api
    from resources.models import Resource

    ids = dict(Resource.objects.filter(workspace=workspace).values_list("filename", "id"))
    items = [
        {"question": text, "expected_resource_ids": sorted(str(ids[d]) for d in qrels[query_id])}
        for query_id, text in queries.items()
    ]
    workspace.top_k = 10
    workspace.save(update_fields=["top_k"])
    client = api.EvaluationClient(workspace)
    test_set = client.test_set("SciFact train", items)
    print("\nThe same figures through the evaluation API (the chat turn): bench, run, difference")
    saved = settings.RETRIEVAL_DENSE, settings.RETRIEVAL_LEXICAL
    try:
        with api.running_worker():
            for name, legs in configurations:
                settings.RETRIEVAL_DENSE, settings.RETRIEVAL_LEXICAL = legs.dense, legs.lexical
                metrics = client.run(test_set, model="extractive", k=10, label=name)["metrics"]
                print("  " + api.parity_line(f"{name} nDCG@10", figures[name][0], metrics["ndcg_at_k"]))
                print("  " + api.parity_line(f"{name} recall@5", figures[name][1], metrics["recall_at"]["5"]))
    finally:
        settings.RETRIEVAL_DENSE, settings.RETRIEVAL_LEXICAL = saved


if __name__ == "__main__":
    main()
