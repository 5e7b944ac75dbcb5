from __future__ import annotations

from celery import shared_task
from django.conf import settings

from retrieval import indexing, reembedding, workspace_index


@shared_task(name="retrieval.workspace_indexes_sweep", ignore_result=True)
def workspace_indexes_sweep() -> dict[str, list[str]]:
    """Periodic (CELERY_BEAT_SCHEDULE): an HNSW index of its own for every
    workspace past ``OWN_INDEX_MIN_PASSAGES`` (retrieval/workspace_index.py).

    Safe to run twice or concurrently: one build runs at a time (an advisory
    lock); a sweep that finds the lock taken skips that workspace until the
    next run.
    """
    return workspace_index.sweep()


@shared_task(name="retrieval.unit_vectors_sweep", ignore_result=True)
def unit_vectors_sweep() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE, every ``UNIT_VECTORS_SWEEP_SECONDS``):
    the answer units' vectors of newly ingested passages, made while no
    ingestion waits (retrieval/unit_vectors.py). Safe to run twice or
    concurrently: one sweep at a time (an advisory lock)."""
    return indexing.unit_vectors_sweep(budget_seconds=settings.UNIT_VECTORS_SWEEP_BUDGET_SECONDS)


@shared_task(name="retrieval.reembed_sweep", ignore_result=True)
def reembed_sweep() -> list[str]:
    """Periodic (CELERY_BEAT_SCHEDULE, every ``REEMBED_SWEEP_SECONDS``): the
    workspaces still searched with a model other than the configured one
    embedded again, a batch at a time while no ingestion waits, and switched
    when complete (retrieval/reembedding.py). Safe to run twice, concurrently
    or after a killed run: one run at a time (an advisory lock), and each
    batch is stored once."""
    return reembedding.reembed_sweep(budget_seconds=settings.REEMBED_SWEEP_BUDGET_SECONDS)
