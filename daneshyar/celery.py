"""The Celery app, the beat scheduler that never piles a sweep up, and how
many messages wait in a queue.

Queues by kind of work, routes and the schedule: daneshyar/config/background.py.
"""

from __future__ import annotations

import copy
import logging
import os
from typing import Any

from celery import Celery, uuid
from celery.beat import PersistentScheduler, ScheduleEntry
from celery.result import AsyncResult
from celery.signals import task_postrun, worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "daneshyar.settings")

app = Celery("daneshyar")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

logger = logging.getLogger(__name__)


@worker_init.connect
def _refuse_an_image_build(**kwargs: Any) -> None:
    """An image build runs without the secrets (daneshyar/config/keys.py); a worker never does."""
    from django.conf import settings

    if settings.BUILD_ONLY:
        # SystemExit: Celery logs and ignores an exception raised in a signal handler.
        raise SystemExit("DANESHYAR_BUILD is for building the image only; unset it to run a worker")


def _periodic_marker(task_name: str) -> str:
    return f"periodic:{task_name}"


class QueuedOnceScheduler(PersistentScheduler):  # type: ignore[misc]
    """Beat's scheduler, but a sweep still queued or running is not queued
    again: each sending claims the task's marker (daneshyar/markers.py) with
    the new message's id, and the worker releases it when that task ends
    (:func:`_periodic_release`). A sweep that takes longer than its interval,
    or waits behind a busy worker, is therefore run once, late, not once for
    every interval that passed; a sweep whose worker died is queued again
    when its marker's lease (PERIODIC_TASK_LEASE_SECONDS) runs out."""

    def apply_async(
        self, entry: ScheduleEntry, producer: Any = None, advance: bool = True, **kwargs: Any
    ) -> AsyncResult:
        from django.conf import settings

        from daneshyar.markers import marker_claim, marker_release

        task_id = uuid()
        lease = settings.PERIODIC_TASK_LEASE_SECONDS
        holder = marker_claim(_periodic_marker(entry.task), task_id, seconds=lease)
        if holder is not None:
            entry = self.reserve(entry) if advance else entry
            logger.info("beat: %s is still queued or running (%s): not queued again", entry.task, holder)
            return AsyncResult(holder or task_id, app=self.app)
        if advance:
            entry = self.reserve(entry)
        # A copy: the id is this message's, not the schedule's (beat keeps entries on disk).
        sent = copy.copy(entry)
        sent.options = {**(entry.options or {}), "task_id": task_id}
        try:
            return super().apply_async(sent, producer=producer, advance=False, **kwargs)
        except Exception:
            marker_release(_periodic_marker(entry.task), task_id)
            raise


@task_postrun.connect
def _periodic_release(task_id: str | None = None, task: Any = None, **kwargs: Any) -> None:
    """A task ended (whatever its outcome): if it is the beat sweep holding
    its marker, the next interval may queue it again."""
    from django.conf import settings

    name = getattr(task, "name", None)
    if task_id is None or name is None:
        return
    if not any(entry.get("task") == name for entry in settings.CELERY_BEAT_SCHEDULE.values()):
        return
    from daneshyar.markers import marker_release

    try:
        marker_release(_periodic_marker(name), task_id)
    except Exception:  # the lease ends it anyway
        logger.warning("could not release the marker of %s", name, exc_info=True)


def queue_waiting(queue: str) -> int:
    """How many messages wait in ``queue``, not yet taken by any worker (the
    ones a worker reserved or runs are not counted)."""
    with app.pool.acquire(block=True) as connection:
        return int(connection.default_channel.queue_declare(queue=queue, passive=False).message_count)
