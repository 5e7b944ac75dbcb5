from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

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
