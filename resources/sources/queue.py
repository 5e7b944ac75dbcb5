"""Queuing a run's task: when it starts, and when it goes on after waiting
out a host's Crawl-delay (a countdown, so that no worker sleeps)."""

from __future__ import annotations

import uuid

from celery import current_app


def run_enqueue(run_id: uuid.UUID | str, *, countdown: float | None = None) -> None:
    """Queue ``resources.source_sync`` for the run, ``countdown`` seconds from now."""
    # By name: the task's module (resources/sources/tasks.py) imports the
    # modules that queue it.
    current_app.send_task("resources.source_sync", args=[str(run_id)], countdown=countdown)
