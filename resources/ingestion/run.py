"""One ingestion run over a batch of claimed resources: claim, parse each,
embed all, write all, and each resource's outcome.

Resources are ingested in batches across documents (one model call and one
passage write per batch), each still parsed, counted, swapped and failed on
its own (docs/ingestion.md, "Batches across documents").
"""

from __future__ import annotations

import functools
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from resources.ingestion.claim import heartbeat, heartbeat_many, resources_ingest_claim
from resources.ingestion.outcome import IngestResult, Requeue, Results, retry_or_fail, timeout_message
from resources.ingestion.parse import resource_prepare
from resources.ingestion.turns import scans_end, turn_hand_back
from resources.ingestion.write import (
    EmbeddedChunks,
    Prepared,
    chunks_embed_batch,
    resource_fail,
    resource_passages_store,
    resources_passages_store,
)
from resources.models import Resource, ResourceFile
from resources.parsing import TurnOver

logger = logging.getLogger(__name__)

# While a batch parses its documents one by one, it refreshes the heartbeat
# of all of them at least this often (well within INGEST_STALE_AFTER_SECONDS).
BATCH_HEARTBEAT_SECONDS = 10.0


@dataclass
class _Run:
    """A batch in progress: what it claimed, and each resource's outcome so far."""

    claimed: list[Resource]
    requeue: Requeue
    results: Results = field(default_factory=dict)
    # The document being parsed, if any: the one a soft time limit blames.
    parsing: uuid.UUID | None = None

    @property
    def ids(self) -> list[uuid.UUID]:
        return [r.pk for r in self.claimed]

    def retry_or_fail(self, resource_id: uuid.UUID, exc: Exception) -> None:
        self.results[resource_id] = retry_or_fail(resource_id, exc, self.requeue)

    def stored(self, resource_id: uuid.UUID, swapped: bool) -> None:
        self.results[resource_id] = IngestResult.READY if swapped else IngestResult.SKIPPED


def resource_ingest(*, resource_id: uuid.UUID, requeue: Requeue | None = None) -> IngestResult:
    """Parse, chunk, embed and store one resource, alone. Safe to run twice.

    Returns the final state (``ready``, ``failed``, ``retrying`` or
    ``skipped``): :func:`resources_ingest` with a batch of one. Without
    ``requeue`` a resource handed to a retry waits, ``pending``, for the
    sweep to queue it.
    """
    results = resources_ingest(resource_ids=[resource_id], requeue=requeue or _leave_to_the_sweep)
    return results.get(resource_id, IngestResult.SKIPPED)


def _leave_to_the_sweep(resource_id: uuid.UUID, countdown: int) -> None:
    pass


def resources_ingest(
    *,
    resource_ids: Sequence[uuid.UUID],
    requeue: Requeue,
    fill: int = 0,
    take_over: bool = False,
    claimant: str = "",
    on_claimed: Callable[[], None] | None = None,
) -> Results:
    """Ingest the named resources, or with ``fill`` up to that many taken by
    the fair claim (:func:`~resources.ingestion.claim.resources_ingest_claim`), as
    one batch: each is parsed and chunked alone (:func:`resource_prepare`),
    then all their chunks go through the model in one call and their
    passages are swapped in one transaction (one DELETE, one multi-row
    INSERT, so one run of the lexeme triggers).

    The guarantees of a single ingestion hold per resource: attempts are
    counted on each row; each swap is atomic; a document that cannot be read
    fails alone; if the shared model call or the shared transaction fails,
    each resource is tried again alone, so one bad document never fails its
    neighbours. A resource whose own step fails is handed to a retry
    (``requeue(id, countdown)``, on commit) or, out of attempts, fails with
    ``ingest_failed``. Returns each claimed resource's final state.
    """
    claimed = resources_ingest_claim(
        resource_ids=resource_ids, fill=fill, take_over=take_over, claimant=claimant
    )
    if not claimed:
        return {}
    run = _Run(claimed=claimed, requeue=requeue)
    try:
        prepared = _prepare_all(run)
        embedded = chunks_embed_batch(
            prepared,
            on_progress=functools.partial(heartbeat_many, [item.resource.pk for item in prepared]),
            on_progress_of=lambda resource_id: functools.partial(heartbeat, resource_id),
            on_error=run.retry_or_fail,
        )
        _store_all(run, embedded)
    except SoftTimeLimitExceeded:
        _soft_time_limit(run)
    scans_end(pk for pk, result in run.results.items() if result == IngestResult.READY)
    return run.results


def _prepare_all(run: _Run) -> list[Prepared]:
    """Parse and chunk each claimed resource in turn; one that cannot be
    read fails, one whose step breaks otherwise goes to a retry."""
    files = ResourceFile.objects.filter(resource_id__in=run.ids)
    stored = dict(files.values_list("resource_id", "data"))
    prepared: list[Prepared] = []
    beat = time.monotonic()
    for resource in run.claimed:
        if time.monotonic() - beat > BATCH_HEARTBEAT_SECONDS:
            # Slow documents ahead of the others: the others are alive too.
            heartbeat_many(run.ids)
            beat = time.monotonic()
        if resource.pk not in stored:  # deleted since the claim
            run.results[resource.pk] = IngestResult.SKIPPED
            continue
        run.parsing = resource.pk
        try:
            chunks = resource_prepare(resource=resource, data=bytes(stored.pop(resource.pk)))
        except SoftTimeLimitExceeded:
            raise
        except TurnOver:  # a turn of its OCR read: back to the queue (turns.py)
            run.results[resource.pk] = turn_hand_back(resource.pk, run.requeue)
            continue
        except Exception as exc:  # retried or failed per resource
            run.retry_or_fail(resource.pk, exc)
            continue
        finally:
            run.parsing = None
        if chunks is None:
            run.results[resource.pk] = IngestResult.FAILED
        else:
            prepared.append(Prepared(resource, chunks))
    return prepared


def _store_all(run: _Run, embedded: dict[uuid.UUID, EmbeddedChunks]) -> None:
    """One transaction for every embedded resource; if it fails, one each."""
    read = {resource.pk: resource.sha256 for resource in run.claimed}
    if len(embedded) > 1:
        try:
            for resource_id, swapped in resources_passages_store(embedded=embedded, read=read).items():
                run.stored(resource_id, swapped)
            return
        except SoftTimeLimitExceeded:
            raise
        except Exception:  # each one again alone below
            logger.warning("storing a batch of %d resources failed; storing each alone", len(embedded))
    for resource_id, one in embedded.items():
        try:
            swapped = resource_passages_store(resource_id=resource_id, embedded=one, read=read)
        except SoftTimeLimitExceeded:
            raise
        except Exception as exc:  # retried or failed per resource
            run.retry_or_fail(resource_id, exc)
            continue
        run.stored(resource_id, swapped)


def _soft_time_limit(run: _Run) -> None:
    """INGEST_TASK_SOFT_TIME_LIMIT in the middle of a batch: the document
    being parsed (or the only one left) fails with ``ingest_timeout``, not
    retried; the others go back to a retry alone, so the time a slow
    neighbour took is never blamed on them."""
    unfinished = [resource_id for resource_id in run.ids if resource_id not in run.results]
    culprit = run.parsing or (unfinished[0] if len(unfinished) == 1 else None)
    seconds = settings.INGEST_TASK_SOFT_TIME_LIMIT
    for resource_id in unfinished:
        if resource_id == culprit:
            message = timeout_message(seconds, setting="INGEST_TASK_SOFT_TIME_LIMIT")
            resource_fail(resource_id=resource_id, code="ingest_timeout", message=message)
            run.results[resource_id] = IngestResult.FAILED
        else:
            run.retry_or_fail(resource_id, TimeoutError("the batch ran out of time"))
