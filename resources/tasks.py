"""Celery tasks: take ids, call the ingestion, safe to run twice.

Delivery is at-least-once (``acks_late`` + ``reject_on_worker_lost`` in
settings): a task killed with its worker runs again on another. Attempts are
counted on the resource row, not in the message, so they survive redelivery
and the sweep's re-queues; when they run out the resource ends ``failed``.
A task ingests a batch of up to INGEST_BATCH_SIZE first attempts taken by
the fair claim (the organization served longest ago first, whatever ids its
message names: every upload queues enough messages for its documents), or
the retry or reingest its message names; a resource that needs another
attempt gets a message of its own, after its backoff.

Imports run one way: ``services`` (uploads) enqueue through this module, and
this module calls ``ingestion``; neither imports ``services``.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from celery import shared_task
from celery.signals import worker_ready
from celery.worker.request import Request
from django.conf import settings
from django.db import connections, transaction

from resources import ingestion

logger = logging.getLogger(__name__)


class IngestRequest(Request):  # type: ignore[misc]
    """The request of an ingestion, as the worker's main process sees it.

    The hard time limit kills the pool child (a parse stuck in C code never
    sees the soft limit's exception), so the child cannot record anything:
    the main process does, here, for the resources the task held (its
    claim recorded the task's id on them). One resource held alone is the
    one that was stuck: it ends ``ingest_timeout``. A batch cannot tell
    which of its resources was stuck, so they go back to a retry alone
    (each counted attempt stays; alone, a stuck one then ends
    ``ingest_timeout``). The message is acknowledged
    (``task_acks_on_failure_or_timeout``), and should it come back anyway,
    the claim finds nothing outstanding.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The worker's own settings, not the ones the sender (a web process,
        # perhaps configured differently) wrote into the message.
        self.time_limits = (settings.INGEST_TASK_TIME_LIMIT, settings.INGEST_TASK_SOFT_TIME_LIMIT)

    def on_timeout(self, soft: bool, timeout: float) -> None:
        super().on_timeout(soft, timeout)
        if soft:
            return
        try:
            held = ingestion.resources_claimed_by(str(self.id))
            if len(held) == 1:
                ingestion.resource_fail(
                    resource_id=held[0],
                    code="ingest_timeout",
                    message=ingestion.timeout_message(timeout, setting="INGEST_TASK_TIME_LIMIT"),
                )
            for resource_id in held if len(held) > 1 else []:
                ingestion.resource_release(resource_id=resource_id, requeue=ingest_enqueue_on_commit)
        except Exception:
            # The resources keep their counted attempt; the sweep ends them.
            logger.exception("could not mark a timed-out ingestion")
        finally:
            # This process forks the pool's next child: hold no connection.
            connections.close_all()


# Prefork pool only (the solo pool has no time limits; the parse deadline
# INGEST_PARSE_TIMEOUT_SECONDS holds everywhere). Not retried.
_TIME_LIMITS: dict[str, Any] = {
    "soft_time_limit": settings.INGEST_TASK_SOFT_TIME_LIMIT,
    "time_limit": settings.INGEST_TASK_TIME_LIMIT,
    "Request": IngestRequest,
}


@shared_task(
    bind=True,
    name="resources.ingest",
    acks_late=True,
    reject_on_worker_lost=True,
    # Bounded by Resource.attempts (INGEST_MAX_RETRIES), not by the message.
    max_retries=None,
    **_TIME_LIMITS,
)
def ingest_resource(self, resource_id: str) -> str:  # type: ignore[no-untyped-def]
    """Ingest the resource if it is a retry or a reingest; else (a first
    attempt) the next batch of the fair claim, which takes it in its
    organization's turn (then its own task may find nothing to do)."""
    results = ingestion.resources_ingest(
        resource_ids=[uuid.UUID(resource_id)],
        requeue=ingest_enqueue_on_commit,
        fill=settings.INGEST_BATCH_SIZE,
        take_over=_redelivered(self),
        claimant=str(self.request.id or ""),
    )
    return results.get(uuid.UUID(resource_id), "skipped")


@shared_task(
    bind=True,
    name="resources.ingest_batch",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
    **_TIME_LIMITS,
)
def ingest_resources(self, resource_ids: list[str]) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """A bulk upload's message: the next batch of the fair claim (the
    upload's documents in their organization's turn)."""
    results = ingestion.resources_ingest(
        resource_ids=[uuid.UUID(rid) for rid in resource_ids],
        requeue=ingest_enqueue_on_commit,
        fill=settings.INGEST_BATCH_SIZE,
        take_over=_redelivered(self),
        claimant=str(self.request.id or ""),
    )
    return {str(rid): state for rid, state in results.items()}


def _redelivered(task: Any) -> bool:
    """The broker gave this message back after its worker died: the attempt
    that holds its resources is its own dead one, so take them over."""
    info = getattr(task.request, "delivery_info", None) or {}
    return bool(info.get("redelivered"))


def ingest_enqueue_on_commit(resource_id: uuid.UUID, countdown: int = 0) -> None:
    """Queue the ingestion when the current transaction commits (after
    ``countdown`` seconds: a retry's backoff).

    ``robust``: if the broker is down the upload still succeeds, and the
    sweep queues it later.
    """

    # A plain function, not a partial: Django names the callback when it logs
    # a failure of a robust one.
    def enqueue() -> None:
        if countdown:
            ingest_resource.apply_async((str(resource_id),), countdown=countdown)
        else:
            ingest_resource.delay(str(resource_id))

    transaction.on_commit(enqueue, robust=True)


def ingest_batch_enqueue_on_commit(resource_ids: Sequence[uuid.UUID]) -> None:
    """Queue the ingestion of many new resources (a bulk upload) on commit,
    INGEST_BATCH_SIZE per task."""
    size = settings.INGEST_BATCH_SIZE
    for start in range(0, len(resource_ids), size):
        batch = [str(rid) for rid in resource_ids[start : start + size]]

        def enqueue(batch: list[str] = batch) -> None:
            ingest_resources.delay(batch)

        transaction.on_commit(enqueue, robust=True)


@shared_task(name="resources.sweep_stale")
def sweep_stale_resources(stale_after_seconds: float | None = None) -> int:
    """Periodic (beat): re-queue stale ingestions, fail those out of attempts.

    ``stale_after_seconds`` defaults to INGEST_STALE_AFTER_SECONDS.
    """
    stale_after = None if stale_after_seconds is None else timedelta(seconds=stale_after_seconds)
    return ingestion.resources_sweep_stale(requeue=ingest_enqueue_on_commit, stale_after=stale_after)


# Kept importable from here (the backoff lives with the retries, in ingestion).
retry_countdown = ingestion.retry_countdown


@worker_ready.connect
def _load_embedding_model(**kwargs: object) -> None:
    """Load the model when the worker starts, not inside its first task."""
    ingestion.embedder_preload()
