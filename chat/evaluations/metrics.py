"""The figures of an evaluation: per item, then per run (means of the
items they apply to), and how two runs compare. Pure functions.

- recall@k: the share of an item's expected documents among the first k
  distinct documents retrieved (k = the workspace's top_k);
- MRR: the mean of 1/rank of the first expected document retrieved (0: none);
- first citation expected: the reply's first cited document is an expected one;
- outcome right: answered when an answer was expected, abstained when
  no_answer, asked back when ask_back;
- reply language right: the reply is in the language the turn should hold
  it in (its question's, else the conversation's, else English:
  ``chat.languages.question_language``); undecidable (None, left out of the
  mean) when the reply is empty, an error, or too short to tell;
- latency p50/p95 in milliseconds.

The first three apply to the items with expected documents; outcome right
and latency to every item.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from chat.languages import question_language
from chat.models import ExpectedOutcome, ReplyOutcome
from retrieval.languages.detect import UNDETERMINED, detect

# The metrics where higher is better: the ones a regression is judged on.
QUALITY_METRICS = ("recall_at_k", "mrr", "first_citation_expected", "outcome_right", "reply_language_right")
LATENCY_METRICS = ("latency_p50_ms", "latency_p95_ms")

RIGHT_OUTCOME = {
    ExpectedOutcome.ANSWER: ReplyOutcome.ANSWERED,
    ExpectedOutcome.NO_ANSWER: ReplyOutcome.ABSTAINED,
    ExpectedOutcome.ASK_BACK: ReplyOutcome.ASKED,
}


@dataclass(frozen=True)
class ItemScores:
    recall: float | None
    reciprocal_rank: float | None
    first_citation_expected: bool | None
    outcome_right: bool


class Scored(Protocol):
    recall: float | None
    reciprocal_rank: float | None
    first_citation_expected: bool | None
    outcome_right: bool
    reply_language_right: bool | None
    latency_ms: int


def item_scores(
    *,
    expected: Sequence[str],
    retrieved: Sequence[str],
    k: int,
    cited: str | None,
    outcome: str,
    expected_outcome: str,
) -> ItemScores:
    right = RIGHT_OUTCOME[ExpectedOutcome(expected_outcome)] == outcome
    wanted = {str(e) for e in expected}
    if not wanted:
        return ItemScores(None, None, None, right)
    recall = len(wanted.intersection(retrieved[:k])) / len(wanted)
    rank = next((i for i, doc in enumerate(retrieved, start=1) if doc in wanted), None)
    return ItemScores(recall, 1 / rank if rank else 0.0, cited in wanted, right)


def language_right(*, question: str, earlier_questions: Sequence[str], reply: str) -> bool | None:
    """The reply is in the turn's language (None: the reply does not tell)."""
    told = detect(reply) if reply.strip() else UNDETERMINED
    if told == UNDETERMINED:
        return None
    return told == question_language(question, earlier_questions).code


def percentile(values: Sequence[int], fraction: float) -> int | None:
    """The nearest-rank percentile (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def run_metrics(results: Sequence[Scored]) -> dict[str, Any]:
    with_expected = [r for r in results if r.recall is not None]
    latencies = [r.latency_ms for r in results]
    return {
        "items": len(results),
        "items_with_expected_documents": len(with_expected),
        "recall_at_k": _mean([r.recall for r in with_expected if r.recall is not None]),
        "mrr": _mean([r.reciprocal_rank or 0.0 for r in with_expected]),
        "first_citation_expected": _mean([float(bool(r.first_citation_expected)) for r in with_expected]),
        "outcome_right": _mean([float(r.outcome_right) for r in results]),
        "reply_language_right": _mean(
            [float(r.reply_language_right) for r in results if r.reply_language_right is not None]
        ),
        "latency_p50_ms": percentile(latencies, 0.5),
        "latency_p95_ms": percentile(latencies, 0.95),
    }


def item_rank(result: Scored) -> tuple[float, ...]:
    """What "better" means for one item: the outcome first, then the first
    citation, then where the expected documents ranked."""
    return (
        float(result.outcome_right),
        float(bool(result.first_citation_expected)),
        result.reciprocal_rank or 0.0,
        result.recall or 0.0,
    )


def verdict(result: Scored, baseline: Scored) -> str:
    mine, theirs = item_rank(result), item_rank(baseline)
    return "better" if mine > theirs else "worse" if mine < theirs else "same"


def metric_deltas(metrics: dict[str, Any], baseline: dict[str, Any]) -> dict[str, float | None]:
    """This run's figure minus the baseline's, per metric (None where either lacks it)."""
    deltas: dict[str, float | None] = {}
    for name in (*QUALITY_METRICS, *LATENCY_METRICS):
        mine, theirs = metrics.get(name), baseline.get(name)
        deltas[name] = None if mine is None or theirs is None else round(mine - theirs, 4)
    return deltas


def regressions(metrics: dict[str, Any], baseline: dict[str, Any], margin: float) -> list[str]:
    """The quality metrics worse than the baseline's by more than ``margin``."""
    deltas = metric_deltas(metrics, baseline)
    return [name for name in QUALITY_METRICS if (d := deltas[name]) is not None and d < -margin]
