"""Background work by kind (docs/scaling.md, "Queues"): the Celery queues,
which task goes to which, and the beat schedule.

Each kind of work has a queue of its own, taken by a worker of its own
(``make run``: daneshyar/devserver.py; docker-compose.yml: one service each),
so a kind of work waits only for its own kind: an hour of one
organization's bulk upload never holds another's evaluation run, a web
source's sync or a sweep.

=============  ==========================================================
queue          work
=============  ==========================================================
ingest         documents: "work is waiting" messages, a few at most, the
               work itself claimed from the database (resources/tasks.py)
sources        web sources' syncs (resources/sources/)
evaluations    evaluation runs
maintenance    every beat sweep (each queued at most once at a time:
               daneshyar/celery.py, ``QueuedOnceScheduler``)
webhooks       webhook deliveries (workspaces/webhooks/)
=============  ==========================================================

``daneshyar/settings.py`` imports these names; each variable is listed with
its default in docs/configuration.md and .env.example.
"""

from __future__ import annotations

import re

from django.core.exceptions import ImproperlyConfigured

from daneshyar.config.ingestion import INGEST_SWEEP_INTERVAL_SECONDS
from daneshyar.config.sources import SOURCES_SWEEP_SECONDS
from daneshyar.config.webhooks import WEBHOOK_SWEEP_SECONDS
from daneshyar.env import env_int, env_str

__all__ = [
    "CELERY_BEAT_SCHEDULE",
    "CELERY_BEAT_SCHEDULER",
    "CELERY_QUEUE_PREFIX",
    "CELERY_TASK_DEFAULT_QUEUE",
    "CELERY_TASK_ROUTES",
    "EVALUATION_QUEUE",
    "INGEST_QUEUE",
    "MAINTENANCE_QUEUE",
    "PERIODIC_TASK_LEASE_SECONDS",
    "REEMBED_SWEEP_BUDGET_SECONDS",
    "REEMBED_SWEEP_SECONDS",
    "SOURCES_QUEUE",
    "UNIT_VECTORS_SWEEP_BUDGET_SECONDS",
    "UNIT_VECTORS_SWEEP_SECONDS",
    "WEBHOOK_QUEUE",
    "WORKSPACE_INDEX_SWEEP_SECONDS",
]

# Put before every queue's name (and every marker's: daneshyar/markers.py),
# so that two deployments, or the test suite and a running service, can
# share one Redis without taking each other's messages. The test suite sets
# a fresh one per run (tests/settings.py).
CELERY_QUEUE_PREFIX = env_str("CELERY_QUEUE_PREFIX", "")
if not re.fullmatch(r"[A-Za-z0-9_.:-]{0,64}", CELERY_QUEUE_PREFIX):
    raise ImproperlyConfigured("CELERY_QUEUE_PREFIX must be at most 64 letters, digits, '_', '.', ':' or '-'")

INGEST_QUEUE = f"{CELERY_QUEUE_PREFIX}ingest"
SOURCES_QUEUE = f"{CELERY_QUEUE_PREFIX}sources"
EVALUATION_QUEUE = f"{CELERY_QUEUE_PREFIX}evaluations"
MAINTENANCE_QUEUE = f"{CELERY_QUEUE_PREFIX}maintenance"
WEBHOOK_QUEUE = f"{CELERY_QUEUE_PREFIX}webhooks"
# A task not routed below (none is) goes with the sweeps, never with documents.
CELERY_TASK_DEFAULT_QUEUE = MAINTENANCE_QUEUE

# Large workspaces get an HNSW index of their own (retrieval/workspace_index.py).
WORKSPACE_INDEX_SWEEP_SECONDS = env_int("WORKSPACE_INDEX_SWEEP_SECONDS", 600, minimum=10)
# The answer units' vectors of new passages, made after ingestion while no
# ingestion waits (retrieval/unit_vectors.py); a sweep works at most the budget.
UNIT_VECTORS_SWEEP_SECONDS = env_int("UNIT_VECTORS_SWEEP_SECONDS", 60, minimum=1)
UNIT_VECTORS_SWEEP_BUDGET_SECONDS = env_int("UNIT_VECTORS_SWEEP_BUDGET_SECONDS", 60, minimum=1)
# Workspaces still searched with the model used before EMBEDDING_MODEL_NAME
# changed are embedded again and switched, while no ingestion waits
# (retrieval/reembedding.py); a sweep works at most the budget.
REEMBED_SWEEP_SECONDS = env_int("REEMBED_SWEEP_SECONDS", 60, minimum=1)
REEMBED_SWEEP_BUDGET_SECONDS = env_int("REEMBED_SWEEP_BUDGET_SECONDS", 60, minimum=1)
# A beat sweep still queued or running is not queued again (the scheduler
# skips it) for at most this long: the lease of its marker, so a sweep whose
# worker died is queued again after it.
PERIODIC_TASK_LEASE_SECONDS = env_int("PERIODIC_TASK_LEASE_SECONDS", 600, minimum=60, maximum=86_400)

_ROUTES = {
    INGEST_QUEUE: ("resources.ingest_next", "resources.ingest", "resources.ingest_batch"),
    SOURCES_QUEUE: ("resources.source_sync",),
    # Evaluation runs; the tasks kept their first names, so messages queued
    # before the evaluations became an app of their own still find them.
    EVALUATION_QUEUE: ("chat.evaluation_run",),
    WEBHOOK_QUEUE: ("workspaces.webhook_deliver",),
}
CELERY_TASK_ROUTES: dict[str, dict[str, str]] = {
    task: {"queue": queue} for queue, tasks in _ROUTES.items() for task in tasks
}


def _every(task: str, seconds: float) -> dict[str, object]:
    return {"task": task, "schedule": float(seconds)}


# Every sweep runs on the maintenance queue, queued at most once at a time
# (CELERY_BEAT_SCHEDULER): a sweep never piles up behind a slow one.
CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    # Workspace.retention_days: delete sessions idle for longer (chat/transcripts/retention.py).
    "chat-delete-expired-sessions": _every("chat.delete_expired_sessions", 3600),
    # Idempotency-Key records are kept 24 hours (workspaces/idempotency.py).
    "workspaces-delete-expired-idempotency-records": _every(
        "workspaces.delete_expired_idempotency_records", 3600
    ),
    # Evaluation runs whose task or worker was lost.
    "chat-evaluation-sweep": _every("chat.evaluation_sweep", 60),
    # Webhook deliveries that are due: retries, and any whose worker was lost (workspaces/webhooks/).
    "workspaces-webhook-deliveries": _every("workspaces.webhook_sweep", WEBHOOK_SWEEP_SECONDS),
    # Ingestions whose worker was lost, and a wake while documents wait (resources/ingestion/sweep.py).
    "resources-sweep-stale": _every("resources.sweep_stale", INGEST_SWEEP_INTERVAL_SECONDS),
    # Web sources: the syncs that are due, and those whose worker was lost.
    "resources-sources-sweep": _every("resources.sources_sweep", SOURCES_SWEEP_SECONDS),
    "retrieval-workspace-indexes": _every("retrieval.workspace_indexes_sweep", WORKSPACE_INDEX_SWEEP_SECONDS),
    "retrieval-unit-vectors": _every("retrieval.unit_vectors_sweep", UNIT_VECTORS_SWEEP_SECONDS),
    "retrieval-reembed": _every("retrieval.reembed_sweep", REEMBED_SWEEP_SECONDS),
}
CELERY_BEAT_SCHEDULER = "daneshyar.celery:QueuedOnceScheduler"
