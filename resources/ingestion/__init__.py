"""The ingestion of a resource: claim, parse, chunk, embed, store, or fail.

State machine (docs/ingestion.md)::

    pending -> processing -> ready | failed

``processing`` means an attempt holds the resource right now. A reingest of
a *ready* resource keeps it ready, and searchable with its old passages,
until the new passages replace them in one transaction. Progress of any
queued or running ingestion is tracked by ``ingest_heartbeat_at``; the sweep
re-queues stale ones and fails those out of attempts.

By phase:

- :mod:`~resources.ingestion.claim`: an attempt claims its resources (the
  work waiting is read from the database: a first attempt, or a retry
  whose backoff is over); the heartbeat.
- :mod:`~resources.ingestion.parse`: each document parsed and chunked alone.
- :mod:`~resources.ingestion.write`: embed, then write ready (passages swapped
  in) or failed; the one module of ``resources`` that calls ``retrieval``.
- :mod:`~resources.ingestion.outcome`: each resource's result
  (:class:`IngestResult`), another attempt or failing for good.
- :mod:`~resources.ingestion.run`: a batch through those phases.
- :mod:`~resources.ingestion.sweep`: stale ingestions re-queued or failed.
- :mod:`~resources.ingestion.turns`: OCR a few pages per attempt, the
  pages kept between attempts (docs/ocr.md, "In turns").

Its modules:

- ``claim.py``: resources claimed for an attempt, and the heartbeat that holds a claim
- ``outcome.py``: how a resource's attempt ends, and retry or fail
- ``parse.py``: parse and chunk one resource, titling it from its text
- ``run.py``: one run over a claimed batch
- ``sweep.py``: the stale sweep
- ``turns.py``: OCR in turns: pages kept, the document handed back to the queue
- ``write.py``: embed and write
"""

from __future__ import annotations

from resources.ingestion.claim import (
    next_retry_at,
    resource_ingest_claim,
    resources_claimed_by,
    resources_ingest_claim,
    work_waiting,
)
from resources.ingestion.outcome import (
    IngestResult,
    Requeue,
    Results,
    max_attempts,
    resource_release,
    retry_countdown,
    timeout_message,
)
from resources.ingestion.parse import heartbeat_interval, resource_chunks, resource_prepare
from resources.ingestion.run import BATCH_HEARTBEAT_SECONDS, resource_ingest, resources_ingest
from resources.ingestion.sweep import UNFINISHED, resources_sweep_stale
from resources.ingestion.write import (
    embedder_preload,
    resource_fail,
    resource_passages_store,
    resources_passages_store,
)

__all__ = [
    "BATCH_HEARTBEAT_SECONDS",
    "UNFINISHED",
    "IngestResult",
    "Requeue",
    "Results",
    "embedder_preload",
    "heartbeat_interval",
    "max_attempts",
    "next_retry_at",
    "resource_chunks",
    "resource_fail",
    "resource_ingest",
    "resource_ingest_claim",
    "resource_passages_store",
    "resource_prepare",
    "resource_release",
    "resources_claimed_by",
    "resources_ingest",
    "resources_ingest_claim",
    "resources_passages_store",
    "resources_sweep_stale",
    "retry_countdown",
    "timeout_message",
    "work_waiting",
]
