"""Celery tasks of web sources (registered by resources/apps.py): one sync,
and the beat sweep. Safe to run twice: a run no longer ``running`` is left
as it is."""

from __future__ import annotations

from celery import shared_task

from resources.sources import services
from resources.sources.run import source_run_execute


@shared_task(name="resources.source_sync")
def source_sync(run_id: str) -> str:
    """One sync of a web source (resources/sources/run.py)."""
    run = source_run_execute(run_id)
    return "gone" if run is None else str(run.status)


@shared_task(name="resources.sources_sweep")
def sources_sweep() -> dict[str, int]:
    """Periodic (beat): fail the syncs whose worker was lost, start those due."""
    failed, started = services.sources_sweep()
    return {"failed": failed, "started": started}
