"""``manage.py evaluate <test_set_id> [--baseline <run_id>] [--margin 0.02]``:
an evaluation run, here and now, for an integrator's CI (docs/evaluation.md)."""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from daneshyar.api import uuid_of
from daneshyar.exceptions import ApplicationError
from evaluations import compare, runs
from evaluations.models import EvaluationRun, RunStatus, TestSet

# Exit statuses: 1 a regression against the baseline, 2 a run that could not be made.
REGRESSION = 1
UNUSABLE = 2


def _uuid(value: str) -> uuid.UUID:
    found = uuid_of(value)
    if found is None:
        raise CommandError(f"Not an id: {value!r}", returncode=UNUSABLE)
    return found


class Command(BaseCommand):
    help = (
        "Run a test set through the chat turn and print the run's metrics (JSON); with --baseline, "
        "exit 1 when a quality metric is lower than the baseline run's by more than --margin."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("test_set_id")
        parser.add_argument("--baseline", help="the id of an earlier completed run of the workspace")
        parser.add_argument("--margin", type=float, default=compare.DEFAULT_MARGIN)
        parser.add_argument("--model", default=runs.DEFAULT_MODEL)
        parser.add_argument("--k", type=int, help="the cutoff of recall@k and nDCG@k (default: top_k)")
        parser.add_argument("--judge-model", help="a generative model that judges each reply (optional)")

    def handle(self, *args: Any, **options: Any) -> None:
        test_set = (
            TestSet.objects.select_related("workspace").filter(id=_uuid(options["test_set_id"])).first()
        )
        if test_set is None:
            raise CommandError(f"No test set {options['test_set_id']}", returncode=UNUSABLE)
        baseline = None
        if options["baseline"]:
            baseline = EvaluationRun.objects.filter(
                id=_uuid(options["baseline"]), test_set__workspace=test_set.workspace
            ).first()
            if baseline is None or baseline.status != RunStatus.COMPLETED:
                raise CommandError(
                    f"No completed run {options['baseline']} of this workspace", returncode=UNUSABLE
                )
        try:
            run = runs.run_execute(
                runs.run_create(
                    test_set=test_set,
                    model=options["model"],
                    k=options["k"],
                    judge_model=options["judge_model"],
                ).id
            )
        except ApplicationError as exc:
            raise CommandError(exc.message, returncode=UNUSABLE) from None
        assert run is not None
        if run.status != RunStatus.COMPLETED:
            raise CommandError(f"Run {run.id} failed: {run.error}", returncode=UNUSABLE)
        report: dict[str, Any] = {"run_id": str(run.id), "metrics": run.metrics}
        if baseline is not None:
            compared = compare.runs_compare(run=run, baseline=baseline, margin=options["margin"])
            report |= {k: compared[k] for k in ("baseline_id", "deltas", "regressions", "counts")}
        self.stdout.write(json.dumps(report, indent=2, default=str))
        if baseline is not None and report["regressions"]:
            raise CommandError(
                f"Worse than run {baseline.id} by more than {options['margin']}: "
                + ", ".join(report["regressions"]),
                returncode=REGRESSION,
            )
