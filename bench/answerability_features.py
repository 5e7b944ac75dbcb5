#!/usr/bin/env python
"""Which signals tell answerable from unanswerable turns on both
collections of MTRAG-UN dev: each signal's threshold fitted on one
collection and read on the other, both directions.

    .venv/bin/python bench/answerability_features.py            # runs the service, then fits
    .venv/bin/python bench/answerability_features.py --cached   # fits the last run's signals again

Every task's conversation runs through the service (as
``bench/conversation_quality.py``); at the decide step the turn's signals
are recorded (``bench/results/answerability_features.jsonl``):

- ``best``: the answerability as the service computes it (the best
  sentence's score, chat/answerability.py);
- ``dense`` / ``lexical``: the best retrieved passage's cosine, and its
  BM25 over what the question could score at most;
- ``coverage``: the share of the question's words, each weighed by its
  rarity in the workspace (inverse document frequency over its passages),
  that the best-scoring sentence's passage holds; ``coverage5``: that the
  retrieved passages hold together;
- ``alone``: for a follow-up, the best sentence's score against the
  question alone.

Per signal (and for the sums of two), a threshold is fitted on one
collection (the best balanced accuracy: the mean of the share of
unanswerable tasks below it and of answerable ones at or above it) and
read on the other.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django
from bench.conversation_quality import bench_caller, load_tasks, load_workspaces, run_turn

RESULTS = Path(__file__).resolve().parent / "results" / "answerability_features.jsonl"


def collect() -> list[dict[str, Any]]:
    from django.db import connection

    from chat.services.turn import decide, prepare
    from chat.text import content_words
    from retrieval.search import lexical

    tasks, corpus = load_tasks()
    workspaces = load_workspaces(corpus)
    seen: dict[str, Any] = {}
    original = decide.turn_decide

    def spy(**kwargs: Any) -> Any:
        decision = original(**kwargs)
        seen.update(kwargs, decision=decision)
        return decision

    prepare.turn_decide = spy  # type: ignore[attr-defined]
    api_key, _ = bench_caller(workspaces)
    sizes = {c: len(d) for c, d in corpus.items()}
    rows = []
    for index, task in enumerate(tasks):
        seen.clear()
        workspace = workspaces[task.collection]
        run_turn(api_key, workspace, task.messages(), f"features-{index}", "extractive")
        passages = seen.get("passages") or []
        decision = seen.get("decision")
        row: dict[str, Any] = {
            "task": task.task_id,
            "collection": task.collection,
            "class": task.answerability,
        }
        if not passages or decision is None or decision.answerability is None:
            rows.append(
                {
                    **row,
                    **dict.fromkeys(
                        ["best", "dense", "lexical", "coverage", "coverage5", "gap2", "gapmed", "z", "dgap"],
                        0.0,
                    ),
                }
            )
            continue
        question = seen["context"].focus
        with connection.cursor() as cursor:
            frequencies = lexical.query_frequencies(cursor, workspace_id=workspace.id, text=question)
            held = [set(lexical.query_lexemes(cursor, p.text)) for p in passages]
        idf = {w: math.log(1 + sizes[task.collection] / (1 + df)) for w, df in frequencies.items()}
        assessment = decision.assessment
        top = 0
        if assessment is not None and assessment.scores:
            index_best = max(assessment.scores, key=lambda i: assessment.scores[i])
            top = assessment.sentences[index_best].passage_index

        def covered(lexemes: set[str], idf: dict[str, float] = idf) -> float:
            total = sum(idf.values())
            return sum(v for w, v in idf.items() if w in lexemes) / total if total else 0.0

        rows.append(
            {
                **row,
                "best": decision.answerability,
                "dense": max((p.dense_score or 0.0) for p in passages),
                "lexical": max((p.lexical_score or 0.0) for p in passages),
                "coverage": covered(held[top]),
                "coverage5": covered(set().union(*held)),
                "alone": max(assessment.alone.values(), default=None) if assessment else None,
                "words": len(content_words(question)),
                **spread(assessment, passages),
            }
        )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def spread(assessment: Any, passages: Sequence[Any]) -> dict[str, float]:
    """How far the best stands out: from the second document's best sentence,
    from the median sentence, and the best passage's cosine from the mean."""
    import statistics

    scores = sorted(assessment.scores.values(), reverse=True) if assessment is not None else []
    documents = assessment.per_document() if assessment is not None else []
    dense = [p.dense_score or 0.0 for p in passages]
    return {
        "gap2": documents[0].score - documents[1].score if len(documents) > 1 else 0.3,
        "gapmed": scores[0] - statistics.median(scores) if scores else 0.0,
        "z": (scores[0] - statistics.mean(scores)) / (statistics.pstdev(scores) or 1.0) if scores else 0.0,
        "dgap": max(dense) - statistics.mean(dense) if dense else 0.0,
    }


def balanced(rows: Sequence[dict[str, Any]], signal: Callable[[dict[str, Any]], float], cut: float) -> float:
    answerable = [signal(r) >= cut for r in rows if r["class"] in ("ANSWERABLE", "PARTIAL")]
    unanswerable = [signal(r) < cut for r in rows if r["class"] == "UNANSWERABLE"]
    return (sum(answerable) / len(answerable) + sum(unanswerable) / len(unanswerable)) / 2


def rates(rows: Sequence[dict[str, Any]], signal: Callable[[dict[str, Any]], float], cut: float) -> str:
    answerable = [signal(r) >= cut for r in rows if r["class"] in ("ANSWERABLE", "PARTIAL")]
    unanswerable = [signal(r) < cut for r in rows if r["class"] == "UNANSWERABLE"]
    answered, abstained = sum(answerable) / len(answerable), sum(unanswerable) / len(unanswerable)
    return f"answered {answered:.3f} abstained {abstained:.3f}"


def fit(rows: Sequence[dict[str, Any]], signal: Callable[[dict[str, Any]], float]) -> float:
    values = sorted({round(signal(r), 4) for r in rows})
    return max(values, key=lambda cut: balanced(rows, signal, cut))


def report(rows: list[dict[str, Any]]) -> None:
    names = ["best", "dense", "lexical", "coverage", "gap2", "gapmed", "z", "dgap"]

    def one(name: str) -> Callable[[dict[str, Any]], float]:
        return lambda r: float(r[name])

    def two(a: str, b: str) -> Callable[[dict[str, Any]], float]:
        return lambda r: float(r[a]) + float(r[b])

    signals = {n: one(n) for n in names}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            signals[f"{a}+{b}"] = two(a, b)
    signals["best*coverage"] = lambda r: float(r["best"]) * float(r["coverage"])
    collections = sorted({r["collection"] for r in rows})
    by = {c: [r for r in rows if r["collection"] == c] for c in collections}
    print(
        f"\n{'signal':18} "
        + " ".join(f"{'fit ' + c + ' → ' + o:>52}" for c in collections for o in collections if o != c)
    )
    for name, signal in signals.items():
        cells = []
        for fit_on in collections:
            cut = fit(by[fit_on], signal)
            for held in (c for c in collections if c != fit_on):
                cells.append(
                    f"{cut:7.3f} own {balanced(by[fit_on], signal, cut):.3f} | {rates(by[held], signal, cut)}"
                )
        print(f"{name:18} " + "  ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cached", action="store_true", help="fit the last run's signals again")
    args = parser.parse_args()
    if args.cached:
        rows = [json.loads(line) for line in RESULTS.read_text().splitlines()]
    else:
        _django.setup("conversation")
        rows = collect()
    report(rows)


if __name__ == "__main__":
    main()
