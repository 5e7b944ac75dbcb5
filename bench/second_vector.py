#!/usr/bin/env python
"""A second vector for English: does an all-MiniLM-L6-v2 leg beside e5's pay for itself?

    EMBEDDING_BACKEND=e5onnx EMBEDDING_THREADS=2 .venv/bin/python bench/second_vector.py
    … bench/second_vector.py --limit 300 --corpus 1200   # the SciFact sample (the defaults)

Offline, without a schema change: for each question the bench takes the
three legs' scores over every passage of its workspace — the cosine of
multilingual-e5-small (the configured model, its vectors as stored), the
cosine of all-MiniLM-L6-v2 (its ONNX export), and the service's own lexical
score (``retrieval.search.search`` with the lexical leg alone: BM25 divided
by what the query could score at most) — and ranks the passages by
``a * e5 + b * MiniLM + (1 - a - b) * lexical`` as the service's hybrid
does (each leg's ``CANDIDATES`` best are the candidates), then for a
follow-up fuses the question's and the conversation's lists as
chat/services/turn/followup_search.py does (its queries, weights, depth and
floor). ``a=0.9, b=0`` is e5's hybrid today (the bench checks it against
``followup_search`` itself on the e5 workspace); ``a=0, b=0.5`` is MiniLM's.

Sets: MTRAG-UN dev (../shared/datasets/mtrag-un-dev), each collection a
workspace, conversation recall@5 of the answerable tasks; SciFact train
claims over a corpus sample (bench/scifact.py, as bench/fusion_weight.py
takes it), nDCG@10 and recall@5. A rule is fitted on one half and read on
the other: clapnq against fiqa, SciFact's even claims against its odd ones.
Vectors are cached under .data/bench; ``daneshyar_bench_second_vector`` holds the e5 workspaces.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django

CACHE = Path(__file__).resolve().parent.parent / ".data" / "bench"
# ../shared/datasets beside the checkout.
DATASETS = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets"
E5_TODAY = (0.9, 0.0)
MINILM_TODAY = (0.0, 0.5)
GRID_A = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
GRID_B = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)


@dataclass(frozen=True)
class Item:
    """One question: its queries (text, weight; more than one for a follow-up)."""

    group: str
    index: int
    queries: tuple[tuple[str, float], ...]
    relevant: frozenset[str]


@dataclass
class Corpus:
    """A workspace's passages in one order, and their two vectors."""

    workspace: Any
    ids: list[str]  # document ids (one passage a document)
    e5: np.ndarray
    minilm: np.ndarray
    by_passage: dict[Any, int]


def vectors(model: str, texts: Sequence[str], *, query: bool) -> np.ndarray:
    """``texts`` embedded by ``model`` (cached under .data/bench)."""
    from retrieval.embeddings import get_embedder

    digest = hashlib.sha256("\x00".join([model, str(query), *texts]).encode()).hexdigest()[:16]
    path = CACHE / f"second-vector-{digest}.npy"
    if path.exists():
        cached: np.ndarray = np.load(path)
        return cached
    embedder = get_embedder(model)
    out = np.asarray(
        embedder.embed_queries(list(texts)) if query else embedder.embed_passages(list(texts)),
        dtype=np.float32,
    )
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, out)
    return out


def corpus_of(name: str, documents: dict[str, str]) -> Corpus:
    """The e5 workspace ``name`` holding ``documents`` (loaded once), and both vectors."""
    from django.conf import settings

    from bench import scifact
    from daneshyar.config.embedding import MINILM
    from retrieval.models import Passage

    ids = sorted(documents)
    texts = [documents[i] for i in ids]
    e5 = vectors(str(settings.EMBEDDING_MODEL_NAME), texts, query=False)
    minilm = vectors(MINILM, texts, query=False)
    data = scifact.SciFact(
        corpus=[{"_id": i, "title": "", "text": t} for i, t in zip(ids, texts, strict=True)],
        queries={},
        qrels={},
    )
    workspace = scifact.load_workspace(data, e5, name=name)
    position = {d: n for n, d in enumerate(ids)}
    by_passage = {
        pid: position[filename]
        for pid, filename in Passage.objects.filter(workspace=workspace).values_list(
            "id", "resource__filename"
        )
    }
    return Corpus(workspace=workspace, ids=ids, e5=e5, minilm=minilm, by_passage=by_passage)


def lexical(corpus: Corpus, text: str) -> np.ndarray:
    """The service's lexical score of every passage for ``text`` (0: no lexeme shared)."""
    from retrieval.search import Legs, search

    out = np.zeros(len(corpus.ids), dtype=np.float32)
    found = search(
        workspace=corpus.workspace, query=text, top_k=len(corpus.ids), legs=Legs(dense=False, lexical=True)
    )
    for passage in found:
        out[corpus.by_passage[passage.passage_id]] = passage.score
    return out


@dataclass
class Scored:  # a query's three legs over its corpus's passages
    e5: np.ndarray
    minilm: np.ndarray
    lexical: np.ndarray


def legs_of(corpus: Corpus, items: Sequence[Item]) -> dict[str, Scored]:
    from django.conf import settings

    from daneshyar.config.embedding import MINILM

    texts = sorted({text for item in items for text, _ in item.queries})
    e5 = vectors(str(settings.EMBEDDING_MODEL_NAME), texts, query=True) @ corpus.e5.T
    minilm = vectors(MINILM, texts, query=True) @ corpus.minilm.T
    return {t: Scored(e5[n], minilm[n], lexical(corpus, t)) for n, t in enumerate(texts)}


def ranked(item: Item, legs: dict[str, Scored], a: float, b: float, k: int) -> list[int]:
    """The ``k`` best passages under the rule (a, b), as the service would rank them."""
    from chat.services.turn.followup_search import CANDIDATES_PER_QUERY
    from retrieval.search.service import CANDIDATES

    lists = []
    for text, weight in item.queries:
        leg = legs[text]
        score = a * leg.e5 + b * leg.minilm + (1 - a - b) * leg.lexical
        candidate = np.zeros(len(score), dtype=bool)
        for on, own in ((a > 0, leg.e5), (b > 0, leg.minilm)):
            if on:
                candidate[np.argsort(-own, kind="stable")[:CANDIDATES]] = True
        best_lexical = np.argsort(-leg.lexical, kind="stable")[:CANDIDATES]
        candidate[best_lexical[leg.lexical[best_lexical] > 0]] = True
        masked = np.where(candidate, score, -np.inf)
        if len(item.queries) == 1:
            return [int(i) for i in np.argsort(-masked, kind="stable")[:k] if candidate[i]]
        top = [int(i) for i in np.argsort(-masked, kind="stable")[:CANDIDATES_PER_QUERY] if candidate[i]]
        lists.append((weight, {i: float(score[i]) for i in top}))
    found = set().union(*(set(scores) for _, scores in lists))
    fused = {i: sum(w * s.get(i, min(s.values())) for w, s in lists) for i in found}
    return sorted(fused, key=lambda i: -fused[i])[:k]


def recall_at_5(ranked_ids: Sequence[str], relevant: frozenset[str]) -> float:
    return len(set(ranked_ids[:5]) & relevant) / len(relevant)


def ndcg_at_10(ranked_ids: Sequence[str], relevant: frozenset[str]) -> float:
    dcg = sum(1.0 / math.log2(i + 2) for i, d in enumerate(ranked_ids[:10]) if d in relevant)
    return dcg / sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), 10)))


def conversation_items(datasets: Path) -> tuple[dict[str, list[Item]], dict[str, dict[str, str]]]:
    """MTRAG-UN's answerable tasks, each with the queries the turn searches."""
    from bench.conversation_quality import load_tasks
    from chat.services.turn.followup_search import retrieval_queries
    from languages import ENGLISH

    tasks, corpus = load_tasks(datasets / "mtrag-un-dev")
    items: dict[str, list[Item]] = {c: [] for c in sorted(corpus)}
    for task in tasks:
        if not task.relevant:
            continue
        queries = retrieval_queries(task.users[-1], task.users[:-1][-20:], language=ENGLISH)
        group = items[task.collection]
        group.append(
            Item(task.collection, len(group), tuple((q.text, q.weight) for q in queries), task.relevant)
        )
    return items, corpus


def service_check(corpus: Corpus, items: Sequence[Item], legs: dict[str, Scored]) -> float:
    """Share of items whose top 5 under e5's rule today is the service's own
    (``followup_search`` on the e5 workspace)."""
    from chat.services.turn.followup_search import RetrievalQuery, followup_search

    same = 0
    for item in items:
        queries = [RetrievalQuery(text, weight) for text, weight in item.queries]
        found = followup_search(workspace=corpus.workspace, queries=queries).passages
        service = [corpus.by_passage[p.passage_id] for p in found[:5]]
        same += service == ranked(item, legs, *E5_TODAY, k=5)
    return same / max(len(items), 1)


Metric = tuple[str, Sequence[Item], Corpus, dict[str, Scored], str]


def figure(metric: Metric, rule: tuple[float, float]) -> tuple[float, float, float]:
    """(even half, odd half, all) of a metric under ``rule``."""
    _, items, corpus, legs, kind = metric
    values = []
    for item in items:
        found = [corpus.ids[i] for i in ranked(item, legs, *rule, k=10)]
        values.append(recall_at_5(found, item.relevant) if kind == "r5" else ndcg_at_10(found, item.relevant))
    even, odd = values[0::2], values[1::2]
    return float(np.mean(even)), float(np.mean(odd)), float(np.mean(values))


def table(
    metrics: Sequence[Metric], rules: Sequence[tuple[float, float]]
) -> dict[tuple[float, float], dict[str, tuple[float, float, float]]]:
    print(
        f"{'e5 a':>5} {'MiniLM b':>8} {'lex':>5}  "
        + "  ".join(f"{m[0] + ' even/odd/all':>27}" for m in metrics)
    )
    out = {}
    for rule in rules:
        out[rule] = {m[0]: figure(m, rule) for m in metrics}
        cells = "  ".join(f"{'/'.join(f'{v:.3f}' for v in out[rule][m[0]]):>27}" for m in metrics)
        print(f"{rule[0]:5.2f} {rule[1]:8.2f} {1 - sum(rule):5.2f}  {cells}", flush=True)
    return out


def fitted(
    results: dict[tuple[float, float], dict[str, tuple[float, float, float]]],
    fit: Sequence[tuple[str, int]],
    held: Sequence[tuple[str, int]],
    label: str,
) -> None:
    """The 3-leg rule (b > 0) best on ``fit`` (metric, half: 0 even, 1 odd, 2 all), read on ``held``."""
    three = [r for r in results if r[1] > 0]
    best = max(three, key=lambda r: sum(results[r][m][h] for m, h in fit))
    half = ("even", "odd", "all")

    def shown(r: tuple[float, float]) -> str:
        return ", ".join(f"{m} {half[h]} {results[r][m][h]:.3f}" for m, h in held)

    print(f"{label}: fitted {best[0]:.2f}/{best[1]:.2f}/{1 - sum(best):.2f} -> {shown(best)}")
    print(f"{'':{len(label)}s}  e5 today -> {shown(E5_TODAY)}; MiniLM -> {shown(MINILM_TODAY)}")


def offset(metrics: Sequence[Metric], rule: tuple[float, float]) -> float:
    """What to add to an English passage's 3-leg score to put it on today's
    scale (e5's hybrid): the mean difference over every question's relevant
    passages, so that in a workspace of several languages English passages
    neither gain nor lose against the others on average."""
    gaps = []
    for _, items, corpus, legs, _ in metrics:
        for item in items:
            leg = legs[item.queries[0][0]]
            for document in item.relevant:
                i = corpus.ids.index(document) if document in corpus.ids else None
                if i is not None:
                    today = E5_TODAY[0] * leg.e5[i] + (1 - E5_TODAY[0]) * leg.lexical[i]
                    gaps.append(
                        today
                        - (rule[0] * leg.e5[i] + rule[1] * leg.minilm[i] + (1 - sum(rule)) * leg.lexical[i])
                    )
    return float(np.mean(gaps))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--limit", type=int, default=300, help="SciFact: the first N train claims")
    parser.add_argument(
        "--corpus", type=int, default=1200, help="SciFact: N abstracts (bench/scifact.py sample)"
    )
    parser.add_argument("--no-scifact", action="store_true", help="MTRAG-UN only")
    parser.add_argument("--datasets", type=Path, default=DATASETS, help=f"default {DATASETS}")
    args = parser.parse_args()
    _django.setup("second_vector")
    from django.conf import settings

    from bench import scifact

    print(f"model {settings.EMBEDDING_MODEL_NAME} ({settings.EMBEDDING_BACKEND})", flush=True)
    metrics: list[Metric] = []
    items, documents = conversation_items(args.datasets)
    for collection, group in items.items():
        corpus = corpus_of(f"mtrag-{collection}", documents[collection])
        legs = legs_of(corpus, group)
        print(
            f"{collection}: {len(group)} tasks, {len(corpus.ids)} passages; "
            f"e5 today's top 5 = the service's in {service_check(corpus, group, legs):.3f}",
            flush=True,
        )
        metrics.append((f"{collection} r@5", group, corpus, legs, "r5"))
    if args.no_scifact:
        return report(metrics)
    data = scifact.sample(scifact.load(args.datasets / "scifact"), queries=args.limit, corpus=args.corpus)
    corpus = corpus_of(f"scifact-{args.corpus}", {d["_id"]: scifact.document_text(d) for d in data.corpus})
    claims = [
        Item("scifact", n, ((text, 1.0),), frozenset(data.qrels[q]))
        for n, (q, text) in enumerate(data.queries.items())
    ]
    legs = legs_of(corpus, claims)
    print(f"scifact: {len(claims)} claims, {len(corpus.ids)} abstracts", flush=True)
    metrics += [
        ("scifact nDCG@10", claims, corpus, legs, "ndcg"),
        ("scifact r@5", claims, corpus, legs, "r5"),
    ]
    report(metrics)


def report(metrics: Sequence[Metric]) -> None:
    rules = [E5_TODAY, MINILM_TODAY] + [
        (a, b) for a, b in itertools.product(GRID_A, GRID_B) if a + b <= 0.95 and (a, b) != E5_TODAY
    ]
    results = table(metrics, rules)
    fitted(results, [("clapnq r@5", 2)], [("fiqa r@5", 2)], "fit clapnq, read fiqa")
    fitted(results, [("fiqa r@5", 2)], [("clapnq r@5", 2)], "fit fiqa, read clapnq")
    for rule in ((0.4, 0.3), (0.6, 0.2), (0.8, 0.1)):
        print(f"offset of rule {rule[0]:.2f}/{rule[1]:.2f}: {offset(metrics, rule):+.3f}")
    if len(metrics) < 3:
        return
    fitted(
        results,
        [("scifact nDCG@10", 0)],
        [("scifact nDCG@10", 1), ("scifact r@5", 1)],
        "fit scifact even, read odd",
    )
    fitted(
        results,
        [("clapnq r@5", 0), ("fiqa r@5", 0), ("scifact nDCG@10", 0)],
        [("clapnq r@5", 1), ("fiqa r@5", 1), ("scifact nDCG@10", 1), ("scifact r@5", 1)],
        "fit all even, read odd",
    )


if __name__ == "__main__":
    main()
