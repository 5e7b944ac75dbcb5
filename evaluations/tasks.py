from __future__ import annotations

from celery import shared_task

from evaluations import runs

# The tasks keep the names they had when the evaluation wing was part of
# chat: a message queued by a deployment before it moved here (a run
# started, a beat entry sent) still finds its task after the upgrade, and
# CELERY_BEAT_SCHEDULE names them so.


@shared_task(name="chat.evaluation_run", ignore_result=True)
def evaluation_run(run_id: str) -> None:
    """Run a pending evaluation run to its end (evaluations/runs.py);
    a redelivered task finds it started and does nothing."""
    runs.run_execute(run_id)


@shared_task(name="chat.evaluation_sweep", ignore_result=True)
def evaluation_sweep() -> None:
    """Periodic (CELERY_BEAT_SCHEDULE): no evaluation run left pending or
    running for ever (evaluations/runs.py, runs_stale_sweep)."""
    runs.runs_stale_sweep()
