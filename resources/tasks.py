"""Celery tasks: take ids, call the ingestion, safe to run twice.

The work is in the database, not in the broker: a resource waits for its
first attempt (``attempts`` 0 with a heartbeat) or for a retry
(``ingest_retry_at``), and a message only says "work is waiting"
(``resources.ingest_next``). However many documents an upload brings, the
ingestion queue holds a few such messages at most (:func:`ingest_wake`), so
it stays short, nothing else waits behind it (every other kind of work has a
queue of its own: daneshyar/config/background.py), and a lost message loses
nothing (the sweep wakes a worker while work waits). A task takes a retry
whose backoff is over, alone, or else a batch of up to INGEST_BATCH_SIZE
first attempts by the fair claim (the organization served longest ago
first).

Delivery is at-least-once (``acks_late`` + ``reject_on_worker_lost`` in
settings): a task killed with its worker runs again on another, taking over
what it held. Attempts are counted on the resource row, not in the message,
so they survive redelivery and the sweep; when they run out the resource
ends ``failed``.

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
from celery import uuid as celery_uuid
from celery.signals import worker_ready
from celery.worker.request import Request
from django.conf import settings
from django.db import connections, transaction
from django.utils import timezone

from daneshyar.celery import queue_waiting
from daneshyar.markers import marker_claim, marker_release
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
                ingestion.resource_release(resource_id=resource_id, requeue=_retry_wake)
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
    name="resources.ingest_next",
    acks_late=True,
    reject_on_worker_lost=True,
    # Bounded by Resource.attempts (INGEST_MAX_RETRIES), not by the message.
    max_retries=None,
    **_TIME_LIMITS,
)
def ingest_next(self) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """ "Work is waiting": ingest what the database says is next (a retry
    whose backoff is over, alone, else the next batch of the fair claim)."""
    return _ingest(self, [])


@shared_task(bind=True, name="resources.ingest", acks_late=True, reject_on_worker_lost=True,
             max_retries=None, **_TIME_LIMITS)  # fmt: skip
def ingest_resource(self, resource_id: str) -> str:  # type: ignore[no-untyped-def]
    """The message of one document, as queued before the work was read from
    the database (kept so that messages already queued are taken): the
    resource if it is a retry or a reingest, else what is next."""
    results = _ingest(self, [resource_id])
    return results.get(resource_id, "skipped")


@shared_task(bind=True, name="resources.ingest_batch", acks_late=True, reject_on_worker_lost=True,
             max_retries=None, **_TIME_LIMITS)  # fmt: skip
def ingest_resources(self, resource_ids: list[str]) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """A bulk upload's message, as queued before (kept like ``resources.ingest``)."""
    return _ingest(self, resource_ids)


def _ingest(task: Any, resource_ids: Sequence[str]) -> dict[str, str]:
    """One batch; then wake another worker while work is left, or, when
    only retries in their backoff wait, one delayed wake for the soonest."""
    claimant = str(task.request.id or "")
    marker_release(_LATER, claimant)  # this is the delayed wake, if one was on its way
    results = ingestion.resources_ingest(
        resource_ids=[uuid.UUID(rid) for rid in resource_ids],
        requeue=_retry_wake,
        fill=settings.INGEST_BATCH_SIZE,
        take_over=_redelivered(task),
        claimant=claimant,
        on_claimed=ingest_wake,
    )
    if results:
        ingest_wake()
    else:
        due = ingestion.next_retry_at()
        if due is not None:
            ingest_wake_later(max(1.0, (due - timezone.now()).total_seconds()))
    return {str(rid): state for rid, state in results.items()}


def _redelivered(task: Any) -> bool:
    """The broker gave this message back after its worker died: the attempt
    that holds its resources is its own dead one, so take them over."""
    info = getattr(task.request, "delivery_info", None) or {}
    return bool(info.get("redelivered"))


# The marker of the one delayed wake on its way (daneshyar/markers.py).
_LATER = "resources.ingest_next:later"


def ingest_wake() -> None:
    """Queue "work is waiting" unless such a message already waits in the
    ingestion queue: the queue holds a few messages at most however many
    documents wait (they are in the database), and a worker that claims
    work wakes the next one (``on_claimed``), so every idle worker gets
    some. A broker that is down loses nothing: the sweep wakes a worker
    while work waits (INGEST_SWEEP_INTERVAL_SECONDS)."""
    try:
        # Run at once (CELERY_TASK_ALWAYS_EAGER: a bench, a management
        # command) no message is queued, so one left in the broker says nothing.
        if settings.CELERY_TASK_ALWAYS_EAGER or queue_waiting(settings.INGEST_QUEUE) == 0:
            ingest_next.delay()
    except Exception:
        logger.warning("could not queue an ingestion wake; the sweep will", exc_info=True)


def ingest_wake_later(seconds: float) -> None:
    """One delayed wake (when a retry's backoff ends); another already on
    its way is enough: each run looks for the soonest retry again, and the
    sweep wakes one for any retry that is due."""
    task_id = celery_uuid()
    try:
        if marker_claim(_LATER, task_id, seconds=seconds + 5) is None:
            ingest_next.apply_async(countdown=seconds, task_id=task_id)
    except Exception:
        logger.warning("could not queue a delayed ingestion wake; the sweep will", exc_info=True)


def ingest_wake_on_commit() -> None:
    """Wake a worker when the current transaction commits (new documents,
    a reingest). ``robust``: if the broker is down the upload still
    succeeds, and the sweep wakes one later."""
    transaction.on_commit(ingest_wake, robust=True)


def _retry_wake(resource_id: uuid.UUID, countdown: int) -> None:
    """A resource handed to a retry waits in the database until its backoff
    ends: wake a worker then (on commit, with the row)."""
    if countdown <= 0:
        ingest_wake_on_commit()
    else:
        transaction.on_commit(lambda: ingest_wake_later(countdown), robust=True)


@shared_task(name="resources.sweep_stale")
def sweep_stale_resources(stale_after_seconds: float | None = None) -> int:
    """Periodic (beat): attempts whose worker was lost back to a retry (or
    failed, out of attempts), and a wake while work waits.

    ``stale_after_seconds`` defaults to INGEST_STALE_AFTER_SECONDS.
    """
    stale_after = None if stale_after_seconds is None else timedelta(seconds=stale_after_seconds)
    return ingestion.resources_sweep_stale(wake=ingest_wake, stale_after=stale_after)


# Kept importable from here (the backoff lives with the retries, in ingestion).
retry_countdown = ingestion.retry_countdown


@worker_ready.connect
def _load_embedding_model(sender: Any = None, **kwargs: object) -> None:
    """Load the model when an ingestion worker starts, not inside its first
    task (the workers of other queues load it when they first need it)."""
    consumed = getattr(getattr(sender, "app", None), "amqp", None)
    queues = set(consumed.queues.consume_from or ()) if consumed is not None else set()
    if not queues or settings.INGEST_QUEUE in queues:
        ingestion.embedder_preload()
