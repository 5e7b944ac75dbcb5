#!/usr/bin/env python
"""Does an evaluation catch a change that makes answers worse? On a
100-item test set of MTRAG-UN dev conversations (clapnq's first 100 tasks,
the workspace of bench/conversation_quality.py):

    .venv/bin/python bench/evaluation_regression.py

1. a baseline run (``manage.py evaluate``, as an integrator's CI calls it);
2. the dense leg switched off (``RETRIEVAL_DENSE=false``) → the run against
   the baseline: deltas, regressions, items better/worse, the exit status;
3. restored → the same, expected exit status 0;
4. the workspace's answerability threshold raised to 0.9 → the same;
5. restored → the same.

The command's exit status is read from its ``CommandError`` (1: worse by
more than the margin, 2: no run), as ``manage.py`` exits with it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from io import StringIO
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django


def evaluate(test_set: str, baseline: str | None, margin: float) -> tuple[int, dict[str, Any]]:
    """``manage.py evaluate`` in this process: (exit status, its JSON report)."""
    from django.core.management import CommandError, call_command

    out = StringIO()
    args = [test_set, "--margin", str(margin)] + (["--baseline", baseline] if baseline else [])
    status = 0
    try:
        call_command("evaluate", *args, stdout=out)
    except CommandError as error:
        status = error.returncode
    return status, json.loads(out.getvalue())


def line(label: str, status: int, report: dict[str, Any], seconds: float) -> None:
    metrics = report["metrics"]
    figures = " ".join(
        f"{name} {metrics[name]:.3f}"
        for name in ("recall_at_k", "ndcg_at_k", "mrr", "first_citation_expected", "outcome_right")
        if metrics.get(name) is not None
    )
    print(f"\n{label}: exit status {status}, {seconds:.0f} s\n  {figures}")
    if "regressions" in report:
        changed = {k: v for k, v in report["deltas"].items() if v is not None and "ms" not in k}
        deltas = " ".join(f"{k} {v:+.3f}" for k, v in changed.items())
        print(f"  deltas {deltas}\n  regressions {report['regressions']}  items {report['counts']}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--margin", type=float, default=0.02)
    args = parser.parse_args()
    _django.setup("conversation")
    from django.conf import settings

    from bench.conversation_quality import EXPECTED_OUTCOME, load_tasks, load_workspaces
    from evaluations import items
    from resources.models import Resource

    tasks, corpus = load_tasks()
    workspace = load_workspaces(corpus)["clapnq"]
    ids = dict(Resource.objects.filter(workspace=workspace).values_list("filename", "id"))
    chosen = [t for t in tasks if t.collection == "clapnq"][: args.items]
    test_set = items.test_set_create(workspace=workspace, name=f"regression check {time.time():.0f}")
    body = "\n".join(
        json.dumps(
            {
                "messages": task.messages(),
                "expected_resource_ids": sorted(str(ids[d]) for d in task.relevant),
                "expected_outcome": EXPECTED_OUTCOME[task.answerability],
            }
        )
        for task in chosen
    )
    items.items_import(test_set=test_set, body=body.encode(), csv_format=False)
    print(f"test set {test_set.id}: {len(chosen)} items of MTRAG-UN dev clapnq")

    def step(label: str, baseline: str | None) -> str:
        started = time.monotonic()
        status, report = evaluate(str(test_set.id), baseline, args.margin)
        line(label, status, report, time.monotonic() - started)
        return str(report["run_id"])

    baseline = step("baseline", None)
    settings.RETRIEVAL_DENSE = False
    step("dense leg off, against the baseline", baseline)
    settings.RETRIEVAL_DENSE = True
    step("dense leg restored, against the baseline", baseline)
    threshold = workspace.answerability_threshold
    workspace.answerability_threshold = 0.9
    workspace.save(update_fields=["answerability_threshold"])
    try:
        step("answerability threshold 0.9, against the baseline", baseline)
    finally:
        workspace.answerability_threshold = threshold
        workspace.save(update_fields=["answerability_threshold"])
    step(f"threshold restored ({threshold}), against the baseline", baseline)


if __name__ == "__main__":
    main()
