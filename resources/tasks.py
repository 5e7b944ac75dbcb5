"""Celery tasks: take ids, call the ingestion, safe to run twice.

Delivery is at-least-once (``acks_late`` + ``reject_on_worker_lost`` in
settings): a task killed with its worker runs again on another. Attempts are
counted on the resource row, not in the message, so they survive redelivery
and the sweep's re-queues; when they run out the resource ends ``failed``.

Imports run one way: ``services`` (uploads) enqueue through this module, and
this module calls ``ingestion``; neither imports ``services``.
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta
from typing import Any

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import worker_ready
from celery.worker.request import Request
from django.conf import settings
from django.db import connections, transaction

from resources import ingestion

logger = logging.getLogger(__name__)


def retry_countdown(attempts: int) -> int:
    """Exponential backoff: base, 2 x base, 4 x base, ... capped at 10 minutes."""
    base = int(settings.INGEST_RETRY_BACKOFF_SECONDS)
    return int(min(600, base * 2 ** max(attempts - 1, 0)))


def _timeout_message(seconds: float, *, setting: str) -> str:
    return (
        f"Ingestion took longer than {seconds:g} seconds ({setting}); limits are not retried. "
        "Split the document into smaller ones."
    )


class IngestRequest(Request):  # type: ignore[misc]
    """The request of an ingestion, as the worker's main process sees it.

    The hard time limit kills the pool child (a parse stuck in C code never
    sees the soft limit's exception), so the child cannot record anything:
    the main process marks the resource ``ingest_timeout`` here. The message
    is acknowledged (``task_acks_on_failure_or_timeout``), and should it come
    back anyway, the claim finds nothing outstanding.
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
            resource_id = uuid.UUID(str(self.args[0] if self.args else self.kwargs["resource_id"]))
            ingestion.resource_fail(
                resource_id=resource_id,
                code="ingest_timeout",
                message=_timeout_message(timeout, setting="INGEST_TASK_TIME_LIMIT"),
            )
        except Exception:
            # The resource keeps its counted attempt; the sweep ends it.
            logger.exception("could not mark a timed-out ingestion failed")
        finally:
            # This process forks the pool's next child: hold no connection.
            connections.close_all()


@shared_task(
    bind=True,
    name="resources.ingest",
    acks_late=True,
    reject_on_worker_lost=True,
    # Bounded by Resource.attempts (INGEST_MAX_RETRIES), not by the message.
    max_retries=None,
    # Prefork pool only (the solo pool has no time limits; the parse deadline
    # INGEST_PARSE_TIMEOUT_SECONDS holds everywhere). Not retried.
    soft_time_limit=settings.INGEST_TASK_SOFT_TIME_LIMIT,
    time_limit=settings.INGEST_TASK_TIME_LIMIT,
    Request=IngestRequest,
)
def ingest_resource(self, resource_id: str) -> str:  # type: ignore[no-untyped-def]
    rid = uuid.UUID(resource_id)
    try:
        return ingestion.resource_ingest(resource_id=rid)
    except SoftTimeLimitExceeded:
        ingestion.resource_fail(
            resource_id=rid,
            code="ingest_timeout",
            message=_timeout_message(
                settings.INGEST_TASK_SOFT_TIME_LIMIT, setting="INGEST_TASK_SOFT_TIME_LIMIT"
            ),
        )
        return "failed"
    except Exception as exc:
        attempts = ingestion.resource_retry_allowed(resource_id=rid)
        if attempts is not None:
            logger.warning(
                "ingestion of %s failed (attempt %d), retrying", resource_id, attempts, exc_info=exc
            )
            raise self.retry(exc=exc, countdown=retry_countdown(attempts)) from exc
        logger.exception("ingestion of %s failed after its last attempt", resource_id)
        ingestion.resource_fail(
            resource_id=rid,
            code="ingest_failed",
            message=f"Ingestion failed after {ingestion.max_attempts()} attempts ({type(exc).__name__}). "
            "Reingest to try again.",
        )
        return "failed"


def ingest_enqueue_on_commit(resource_id: uuid.UUID) -> None:
    """Queue the ingestion when the current transaction commits.

    ``robust``: if the broker is down the upload still succeeds, and the
    sweep queues it later.
    """

    # A plain function, not a partial: Django names the callback when it logs
    # a failure of a robust one.
    def enqueue() -> None:
        ingest_resource.delay(str(resource_id))

    transaction.on_commit(enqueue, robust=True)


@shared_task(name="resources.sweep_stale")
def sweep_stale_resources(stale_after_seconds: float | None = None) -> int:
    """Periodic (beat): re-queue stale ingestions, fail those out of attempts.

    ``stale_after_seconds`` defaults to INGEST_STALE_AFTER_SECONDS.
    """
    stale_after = None if stale_after_seconds is None else timedelta(seconds=stale_after_seconds)
    return ingestion.resources_sweep_stale(requeue=ingest_enqueue_on_commit, stale_after=stale_after)


@worker_ready.connect
def _load_embedding_model(**kwargs: object) -> None:
    """Load the model when the worker starts, not inside its first task."""
    ingestion.embedder_preload()
