"""The figures of an evaluation: per item, then per run (means of the
items they apply to), and how two runs compare. Pure functions.

- recall@k: the share of an item's expected documents among the first k
  distinct documents retrieved (k = the run's ``k``, by default the
  workspace's top_k);
- recall at the usual cutoffs up to k (1, 3, 5, 10, 20), as BEIR reports them;
- nDCG@k: the discounted gain of the expected documents among those first
  k, against the best order (binary relevance);
- MRR: the mean of 1/rank of the first expected document retrieved (0: none);
- first citation expected: of the replies that cite, the share whose first
  cited document is an expected one (a reply without a citation is the
  outcome's business, not the citation's);
- outcome right: answered when an answer was expected, abstained when
  no_answer, asked back when ask_back — overall and per expected outcome;
- reply language right: the reply is in the language the turn should hold
  it in (its question's, else the conversation's, else English:
  ``languages.question_language``); undecidable (None, left out of the
  mean) when the reply is empty, an error, or too short to tell;
- latency p50/p95 in milliseconds.

The first four apply to the items with expected documents; outcome right
and latency to every item. The definitions are those of
bench/conversation_quality.py and bench/retrieval_quality.py, whose figures
a run reproduces (``--through-evaluation``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from evaluations.models import ExpectedOutcome
from evaluations.outcomes import ABSTAINED, ANSWERED, ASKED
from languages import UNDETERMINED, detect, question_language

# The metrics where higher is better: the ones a regression is judged on.
QUALITY_METRICS = (
    "recall_at_k",
    "ndcg_at_k",
    "mrr",
    "first_citation_expected",
    "outcome_right",
    "reply_language_right",
)
LATENCY_METRICS = ("latency_p50_ms", "latency_p95_ms")

RIGHT_OUTCOME = {
    ExpectedOutcome.ANSWER: ANSWERED,
    ExpectedOutcome.NO_ANSWER: ABSTAINED,
    ExpectedOutcome.ASK_BACK: ASKED,
}


@dataclass(frozen=True)
class ItemScores:
    recall: float | None
    reciprocal_rank: float | None
    first_citation_expected: bool | None
    outcome_right: bool


class Scored(Protocol):
    expected_outcome: str
    expected_resource_ids: list[str]
    retrieved_resource_ids: list[str]
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
    return ItemScores(recall, 1 / rank if rank else 0.0, None if cited is None else cited in wanted, right)


CUTOFFS = (1, 3, 5, 10, 20)


def recall_at(*, expected: Sequence[str], retrieved: Sequence[str], k: int) -> float:
    wanted = {str(e) for e in expected}
    return len(wanted.intersection(str(doc) for doc in retrieved[:k])) / len(wanted) if wanted else 0.0


def ndcg(*, expected: Sequence[str], retrieved: Sequence[str], k: int) -> float:
    """nDCG@k with binary relevance: the expected documents' discounted gain
    among the first ``k`` retrieved, over the best possible."""
    wanted = {str(e) for e in expected}
    gain = sum(1.0 / math.log2(i + 2) for i, doc in enumerate(retrieved[:k]) if str(doc) in wanted)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(wanted), k)))
    return gain / ideal if ideal else 0.0


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


def run_metrics(results: Sequence[Scored], *, k: int) -> dict[str, Any]:
    with_expected = [r for r in results if r.recall is not None]
    cited = [r for r in with_expected if r.first_citation_expected is not None]
    latencies = [r.latency_ms for r in results]
    return {
        "items": len(results),
        "items_with_expected_documents": len(with_expected),
        "k": k,
        "recall_at_k": _mean([r.recall for r in with_expected if r.recall is not None]),
        "recall_at": {
            str(cutoff): _mean(
                [
                    recall_at(expected=r.expected_resource_ids, retrieved=r.retrieved_resource_ids, k=cutoff)
                    for r in with_expected
                ]
            )
            for cutoff in CUTOFFS
            if cutoff <= k
        },
        "ndcg_at_k": _mean(
            [
                ndcg(expected=r.expected_resource_ids, retrieved=r.retrieved_resource_ids, k=k)
                for r in with_expected
            ]
        ),
        "mrr": _mean([r.reciprocal_rank or 0.0 for r in with_expected]),
        "first_citation_expected": _mean([float(bool(r.first_citation_expected)) for r in cited]),
        "outcome_right": _mean([float(r.outcome_right) for r in results]),
        "reply_language_right": _mean(
            [float(r.reply_language_right) for r in results if r.reply_language_right is not None]
        ),
        "by_expected_outcome": {
            str(outcome): {
                "items": len(group),
                "outcome_right": _mean([float(r.outcome_right) for r in group]),
            }
            for outcome in ExpectedOutcome
            if (group := [r for r in results if r.expected_outcome == outcome])
        },
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
