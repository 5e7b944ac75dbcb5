"""Two runs, item by item: what got better, what got worse, and the metric deltas."""

from __future__ import annotations

from typing import Any

from daneshyar.exceptions import ValidationFailed
from evaluations.metrics import metric_deltas, regressions, verdict
from evaluations.models import EvaluationResult, EvaluationRun, RunStatus

DEFAULT_MARGIN = 0.02


def _side(result: EvaluationResult) -> dict[str, Any]:
    return {
        "outcome": result.outcome,
        "outcome_right": result.outcome_right,
        "reply_language_right": result.reply_language_right,
        "judge_verdict": result.judge_verdict,
        "recall": result.recall,
        "reciprocal_rank": result.reciprocal_rank,
        "first_citation_expected": result.first_citation_expected,
        "first_cited_resource_id": result.first_cited_resource_id,
        "latency_ms": result.latency_ms,
    }


def runs_compare(
    *, run: EvaluationRun, baseline: EvaluationRun, margin: float = DEFAULT_MARGIN
) -> dict[str, Any]:
    """``run`` against ``baseline`` (both completed runs of one workspace):
    the items both ran (matched by item), each better, worse or the same."""
    for name, which in (("id", run), ("other_id", baseline)):
        if which.status != RunStatus.COMPLETED:
            raise ValidationFailed(
                "Only completed runs are compared.", fields={name: [f"The run is {which.status}."]}
            )
    theirs = {r.item_id: r for r in baseline.results.all() if r.item_id is not None}
    items = []
    counts = {"better": 0, "worse": 0, "same": 0}
    for result in run.results.all():
        before = theirs.get(result.item_id) if result.item_id is not None else None
        if before is None:
            continue
        judged = verdict(result, before)
        counts[judged] += 1
        items.append(
            {
                "item_id": result.item_id,
                "question": result.question,
                "expected_outcome": result.expected_outcome,
                "verdict": judged,
                "run": _side(result),
                "baseline": _side(before),
            }
        )
    mine, base = run.metrics or {}, baseline.metrics or {}
    return {
        "run_id": run.id,
        "baseline_id": baseline.id,
        "metrics": mine,
        "baseline_metrics": base,
        "deltas": metric_deltas(mine, base),
        "margin": margin,
        "regressions": regressions(mine, base, margin),
        "counts": counts,
        "items": items,
    }
