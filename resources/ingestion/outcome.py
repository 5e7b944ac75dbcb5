"""How one resource's attempt ends, as a type: ``ready``, ``failed``,
``retrying`` or ``skipped``; and the decision between another attempt and
failing for good after an error of its own."""

from __future__ import annotations

import enum
import logging
import uuid
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from daneshyar.exceptions import ApplicationError
from resources.ingestion.write import resource_fail
from resources.models import Resource, ResourceStatus

logger = logging.getLogger(__name__)

# ``requeue(id, countdown)``: another attempt of one resource, alone, is
# waiting in the database from ``countdown`` seconds on (its
# ``ingest_retry_at``, set on commit with the row): wake a worker for it.
Requeue = Callable[[uuid.UUID, int], None]


class IngestResult(enum.StrEnum):
    """The final state of a claimed resource after an ingestion run (a
    string, as the Celery tasks return it)."""

    READY = "ready"
    FAILED = "failed"
    # Handed to another attempt after its backoff (back to ``pending``).
    RETRYING = "retrying"
    # A turn of its OCR done, back in the queue for the next (docs/ocr.md).
    CONTINUING = "continuing"
    # Nothing done: deleted meanwhile, or not this run's to do.
    SKIPPED = "skipped"


Results = dict[uuid.UUID, IngestResult]


def max_attempts() -> int:
    return int(settings.INGEST_MAX_RETRIES) + 1


def retry_countdown(attempts: int) -> int:
    """Exponential backoff: base, 2 x base, 4 x base, ... capped at 10 minutes."""
    base = int(settings.INGEST_RETRY_BACKOFF_SECONDS)
    return int(min(600, base * 2 ** max(attempts - 1, 0)))


def timeout_message(seconds: float, *, setting: str) -> str:
    return (
        f"Ingestion took longer than {seconds:g} seconds ({setting}); limits are not retried. "
        "Split the document into smaller ones."
    )


def worker_lost_message(attempts: int) -> str:
    return (
        f"Ingestion did not finish after {attempts} attempts: the worker stopped or timed out "
        "each time. Reingest to try again."
    )


def retry_or_fail(resource_id: uuid.UUID, exc: Exception, requeue: Requeue) -> IngestResult:
    """After an unexpected error of one resource: another attempt after its
    backoff (the resource goes back to ``pending``: no attempt holds it), or
    ``failed`` with ``ingest_failed`` when its attempts are used up."""
    with transaction.atomic():
        resource = Resource.objects.select_for_update().filter(pk=resource_id).first()
        if resource is None:
            return IngestResult.SKIPPED
        if resource.attempts < max_attempts():
            now = timezone.now()
            countdown = retry_countdown(resource.attempts)
            resource.ingest_heartbeat_at = now
            resource.ingest_retry_at = now + timedelta(seconds=countdown)
            if resource.status == ResourceStatus.PROCESSING:
                resource.status = ResourceStatus.PENDING
                resource.status_changed_at = now
            resource.save()
            logger.warning(
                "ingestion of %s failed (attempt %d), retrying", resource_id, resource.attempts, exc_info=exc
            )
            requeue(resource_id, countdown)
            return IngestResult.RETRYING
    logger.error("ingestion of %s failed after its last attempt", resource_id, exc_info=exc)
    # An expected failure's message is written for people (the embedding
    # server down, say): it says why; anything else only its kind.
    reason = f": {exc.message}" if isinstance(exc, ApplicationError) else f" ({type(exc).__name__})."
    resource_fail(
        resource_id=resource_id,
        code="ingest_failed",
        message=f"Ingestion failed after {max_attempts()} attempts{reason} Reingest to try again.",
    )
    return IngestResult.FAILED


def resource_release(*, resource_id: uuid.UUID, requeue: Requeue) -> IngestResult:
    """Hand a resource whose batch ended early to a retry alone (or fail it,
    out of attempts), as after an error of its own."""
    return retry_or_fail(resource_id, TimeoutError("its batch ended early"), requeue)
