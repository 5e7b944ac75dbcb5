"""Offline comparison of fusion rules on SciFact (bench/retrieval_quality.py --sweep).

Each query's dense scores (exact cosine over the whole corpus) and lexical
scores (the service's BM25 SQL, every matching passage) are taken once; the
rules below are then applied to the top-``depth`` candidates of each leg.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any
from unittest import mock

import numpy as np

BUDGETS = (None, 5000, 2000, 1000, 500)


def run(
    workspace: Any,
    queries: dict[str, str],
    qrels: dict[str, set[str]],
    corpus_id: dict[uuid.UUID, str],
    evaluate: Callable[..., tuple[float, float]],
) -> None:
    from django.db import connection, transaction

    from retrieval.embeddings import get_embedder
    from retrieval.models import Passage
    from retrieval.search import lexical

    ids = []
    matrix = []
    for pid, vector in Passage.objects.filter(workspace=workspace).values_list("id", "embedding"):
        ids.append(pid)
        matrix.append(vector)
    embeddings = np.asarray(matrix, dtype=np.float32)
    texts = list(queries.values())
    query_vectors = np.asarray(get_embedder().embed_queries(texts), dtype=np.float32)

    legs: dict[str, tuple[list[tuple[uuid.UUID, float]], list[tuple[uuid.UUID, float]], float]] = {}
    with transaction.atomic(), connection.cursor() as cursor:
        for text, qv in zip(texts, query_vectors, strict=True):
            sims = embeddings @ qv
            order = np.argsort(-sims)[:1000]
            dense = [(ids[i], float(sims[i])) for i in order]
            with mock.patch.object(lexical, "LEXICAL_BUDGET", 10**9):
                found = lexical.bm25(
                    cursor,
                    workspace_id=workspace.id,
                    model=workspace.embedding_model,
                    lexemes=lexical.query_lexemes(cursor, text),
                    limit=1000,
                )
            lex = sorted(found.scores.items(), key=lambda kv: -kv[1])
            legs[text] = (dense, lex, found.best)

    cosine = {text: dict(d) for text, (d, _, _) in legs.items()}
    bm25 = {text: dict(lx) for text, (_, lx, _) in legs.items()}

    def ranked(score: Callable[[str, uuid.UUID], float], depth: int) -> Callable[[str], list[str]]:
        def go(text: str) -> list[str]:
            dense, lex, _ = legs[text]
            candidates = {pid for pid, _ in dense[:depth]} | {pid for pid, _ in lex[:depth]}
            best = sorted(candidates, key=lambda pid: -score(text, pid))[:10]
            return [corpus_id[pid] for pid in best]

        return go

    def convex(alpha: float, norm_dense: bool = False) -> Callable[[str, uuid.UUID], float]:
        def score(text: str, pid: uuid.UUID) -> float:
            _, _lex, best = legs[text]
            cos = cosine[text].get(pid, 0.0)
            if norm_dense:
                top = legs[text][0][0][1]
                cos = cos / top if top > 0 else cos
            return alpha * cos + (1 - alpha) * (bm25[text].get(pid, 0.0) / best if best else 0.0)

        return score

    def rrf(k: float, weight: float = 0.5, depth: int = 100) -> Callable[[str, uuid.UUID], float]:
        ranks: dict[str, tuple[dict[uuid.UUID, int], dict[uuid.UUID, int]]] = {
            text: (
                {pid: r for r, (pid, _) in enumerate(d[:depth], 1)},
                {pid: r for r, (pid, _) in enumerate(lx[:depth], 1)},
            )
            for text, (d, lx, _) in legs.items()
        }

        def score(text: str, pid: uuid.UUID) -> float:
            rd, rl = ranks[text]
            s = 0.0
            if pid in rd:
                s += 2 * weight / (k + rd[pid])
            if pid in rl:
                s += 2 * (1 - weight) / (k + rl[pid])
            return s

        return score

    # The candidate budget of the lexical leg, as the hybrid service runs it
    # (the dense leg's top 100 always scored lexically too).
    budgeted: dict[int | None, dict[str, tuple[dict[uuid.UUID, float], float]]] = {}
    with transaction.atomic(), connection.cursor() as cursor:
        for budget in BUDGETS:
            budgeted[budget] = {}
            for text in texts:
                dense_ids = [pid for pid, _ in legs[text][0][:100]]
                with mock.patch.object(lexical, "LEXICAL_BUDGET", budget if budget is not None else 10**9):
                    found = lexical.bm25(
                        cursor,
                        workspace_id=workspace.id,
                        model=workspace.embedding_model,
                        lexemes=lexical.query_lexemes(cursor, text),
                        limit=100,
                        extra_ids=dense_ids,
                    )
                budgeted[budget][text] = (found.scores, found.best)

    def hybrid_budget(budget: int | None, alpha: float = 0.7) -> Callable[[str], list[str]]:
        def go(text: str) -> list[str]:
            scores, best = budgeted[budget][text]
            candidates = {pid for pid, _ in legs[text][0][:100]} | set(scores)
            sims = cosine[text]

            def score(pid: uuid.UUID) -> float:
                return alpha * sims.get(pid, 0.0) + (1 - alpha) * (
                    scores.get(pid, 0.0) / best if best else 0.0
                )

            return [corpus_id[pid] for pid in sorted(candidates, key=lambda pid: -score(pid))[:10]]

        return go

    rows: list[tuple[str, float, float]] = []

    def add(name: str, run: Callable[[str], list[str]]) -> None:
        ndcg, recall = evaluate(run, queries, qrels)
        rows.append((name, ndcg, recall))
        print(f"{name:<40} {ndcg:.3f}  {recall:.3f}", flush=True)

    print(f"{'rule':<40} nDCG@10 recall@5")
    add("dense only (exact)", ranked(convex(1.0), 100))
    add("BM25 only", ranked(convex(0.0), 100))
    for k in (10, 30, 60, 100):
        add(f"RRF k={k} top-100", ranked(rrf(k), 100))
    for w in (0.4, 0.6):
        add(f"RRF k=60 dense weight {w}", ranked(rrf(60, w), 100))
    for alpha in (0.3, 0.4, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8):
        add(f"convex a={alpha} cos + bm25/best, top-100", ranked(convex(alpha), 100))
    for alpha in (0.5, 0.6, 0.7):
        add(f"convex a={alpha} cos/best + bm25/best", ranked(convex(alpha, True), 100))
    for depth in (10, 20, 50, 1000):
        add(f"convex a=0.7 top-{depth}", ranked(convex(0.7), depth))
    for budget in BUDGETS:
        add(f"service hybrid a=0.7, lexical budget {budget or 'none'}", hybrid_budget(budget))
