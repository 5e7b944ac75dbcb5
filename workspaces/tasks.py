from __future__ import annotations

import uuid
from collections.abc import Sequence

from celery import shared_task
from django.db import transaction

from workspaces.idempotency import idempotency_expired_delete
from workspaces.webhooks.delivery import deliveries_due, delivery_attempt


@shared_task(name="workspaces.delete_expired_idempotency_records", ignore_result=True)
def delete_expired_idempotency_records() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): Idempotency-Key records past their 24 hours."""
    return idempotency_expired_delete()


@shared_task(name="workspaces.webhook_deliver", ignore_result=True)
def webhook_deliver(delivery_id: str) -> None:
    """One attempt of one webhook delivery (workspaces/webhooks/delivery.py);
    a retry is taken by the sweep when it is due, never by Celery's retries."""
    following = delivery_attempt(delivery_id=uuid.UUID(delivery_id))
    if following is not None:
        webhook_deliver.delay(str(following))


@shared_task(name="workspaces.webhook_sweep", ignore_result=True)
def webhook_sweep() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): queue the deliveries that are due."""
    due = deliveries_due()
    for delivery_id in due:
        webhook_deliver.delay(str(delivery_id))
    return len(due)


def webhook_deliveries_enqueue_on_commit(delivery_ids: Sequence[uuid.UUID]) -> None:
    """Queue the deliveries when the current transaction commits. ``robust``:
    with the broker down the change still commits, and the sweep posts them."""
    ids = [str(i) for i in delivery_ids]

    def enqueue() -> None:
        for delivery_id in ids:
            webhook_deliver.delay(delivery_id)

    transaction.on_commit(enqueue, robust=True)
