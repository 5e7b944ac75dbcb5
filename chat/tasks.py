from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from chat.evaluations import runs
from chat.transcripts import retention


@shared_task(
    name="chat.delete_expired_sessions",
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=3,
    ignore_result=True,
)
def delete_expired_sessions() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): apply every workspace's retention_days.

    Takes no arguments and is safe to run twice or concurrently: each batch
    re-checks the cutoff as it deletes.
    """
    return retention.sessions_expired_delete()


@shared_task(name="chat.evaluation_run", ignore_result=True)
def evaluation_run(run_id: str) -> None:
    """Run a pending evaluation run to its end (chat/evaluations/runs.py);
    a redelivered task finds it started and does nothing."""
    runs.run_execute(run_id)


@shared_task(name="chat.evaluation_sweep", ignore_result=True)
def evaluation_sweep() -> None:
    """Periodic (CELERY_BEAT_SCHEDULE): no evaluation run left pending or
    running for ever (chat/evaluations/runs.py, runs_stale_sweep)."""
    runs.runs_stale_sweep()
