from __future__ import annotations

from celery import shared_task

from workspaces.idempotency import idempotency_expired_delete


@shared_task(name="workspaces.delete_expired_idempotency_records", ignore_result=True)
def delete_expired_idempotency_records() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): Idempotency-Key records past their 24 hours."""
    return idempotency_expired_delete()
