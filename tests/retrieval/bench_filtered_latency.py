"""Filtered against unfiltered search latency on one workspace (a
measurement, not collected by the suite: run it by path)::

    DANESHYAR_DATA_DIR=$PWD/.data/test REDIS_URL=redis://127.0.0.1:6379/<db> \\
      .venv/bin/python -m pytest tests/retrieval/bench_filtered_latency.py -s -q

``FILTERED_BENCH_DOCUMENTS`` documents (default 2,000) of 10 passages, random
unit vectors (the query's embedding taken out: a fixed vector is served),
texts sharing the query's words; 1 % of the documents match the filter.
Prints p50/p95 of ``search`` for the dense leg (through the shared HNSW
index: the workspace is past ``EXACT_MAX_PASSAGES``) and for hybrid, with
and without the filter, and checks that each filtered search returns
``top_k`` matching passages.
"""

from __future__ import annotations

import functools
import hashlib
import os
import statistics
import time
from collections.abc import Callable
from unittest import mock

import numpy as np
import pytest

from resources.models import Resource, ResourceStatus
from retrieval.embeddings import get_embedder
from retrieval.filters import Access, filters_parse
from retrieval.models import Passage
from retrieval.passage_analysis import passages_analysis
from retrieval.search import search
from retrieval.search.service import Legs
from tests.conftest import Tenant

DOCUMENTS = int(os.environ.get("FILTERED_BENCH_DOCUMENTS", "2000"))
PASSAGES = 10
QUERIES = 40
WORDS = [
    "warranty",
    "kettle",
    "refund",
    "claim",
    "toaster",
    "battery",
    "screen",
    "hinge",
    "cable",
    "filter",
    "motor",
    "lid",
]


def _load(tenant: Tenant, rng: np.random.Generator) -> None:
    embedder = get_embedder()
    dimensions = embedder.dimensions
    for start in range(0, DOCUMENTS, 200):
        resources = Resource.objects.bulk_create(
            Resource(
                workspace=tenant.workspace,
                title=f"Doc {i}",
                content_type="text/plain",
                size_bytes=1,
                sha256=hashlib.sha256(f"bench:{i}".encode()).hexdigest(),
                status=ResourceStatus.READY,
                passage_count=PASSAGES,
                metadata={"line": "rare" if i % 100 == 7 else "common", "number": i},
            )
            for i in range(start, min(start + 200, DOCUMENTS))
        )
        texts = [
            f"Part {j} of document {r.title}: the {' '.join(rng.choice(WORDS, 4))} is covered."
            for r in resources
            for j in range(PASSAGES)
        ]
        vectors = rng.normal(size=(len(texts), dimensions))
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        analyses = passages_analysis(texts)
        Passage.objects.bulk_create(
            Passage(
                workspace=tenant.workspace,
                resource=resources[n // PASSAGES],
                ordinal=n % PASSAGES,
                text=text,
                char_start=0,
                char_end=len(text),
                token_count=len(text.split()),
                embedding=vector.tolist(),
                embedding_model=embedder.model_name,
                **analysis,
            )
            for n, (text, vector, analysis) in enumerate(zip(texts, vectors, analyses, strict=True))
        )


def _timed(run: Callable[[], None]) -> tuple[float, float]:
    run()  # warm: statements composed, caches filled
    took = []
    for _ in range(QUERIES):
        start = time.perf_counter()
        run()
        took.append((time.perf_counter() - start) * 1000)
    took.sort()
    return statistics.median(took), took[int(0.95 * (len(took) - 1))]


@pytest.mark.django_db
def test_filtered_against_unfiltered_latency(owner: Tenant) -> None:
    rng = np.random.default_rng(11)
    started = time.perf_counter()
    _load(owner, rng)
    took = time.perf_counter() - started
    print(f"\nloaded {DOCUMENTS} documents, {DOCUMENTS * PASSAGES} passages in {took:.0f} s")
    query_vector = rng.normal(size=get_embedder().dimensions)
    query_vector /= np.linalg.norm(query_vector)
    rare = Access(filters=filters_parse({"type": "eq", "key": "line", "value": "rare"}))
    with mock.patch("retrieval.search.service.embed_cached", return_value=[query_vector]):
        for name, legs in [("dense (HNSW)", Legs(dense=True, lexical=False)), ("hybrid", Legs(True, True))]:
            found = search(workspace=owner.workspace, query="kettle warranty claim", legs=legs, access=rare)
            assert len(found) == owner.workspace.top_k
            assert all(r.resource_title and int(r.resource_title.split()[1]) % 100 == 7 for r in found)

            def run(legs: Legs = legs, access: Access | None = None) -> None:
                search(
                    workspace=owner.workspace,
                    query="kettle warranty claim",
                    legs=legs,
                    access=access or Access(),
                )

            plain = _timed(run)
            filtered = _timed(functools.partial(run, access=rare))
            print(
                f"{name}: unfiltered p50 {plain[0]:.1f} ms p95 {plain[1]:.1f} ms; "
                f"1 % filter p50 {filtered[0]:.1f} ms p95 {filtered[1]:.1f} ms"
            )
