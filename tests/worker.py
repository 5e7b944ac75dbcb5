"""A real Celery worker (thread, solo pool) on the configured broker — Redis
when REDIS_URL is set, as in scripts/test — against the test database.

The ``celery_worker`` fixture is registered in tests/conftest.py."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from celery.worker import WorkController
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, connections

from daneshyar.celery import app as celery_app
from resources.models import Resource, ResourceStatus

FINISHED = (ResourceStatus.READY, ResourceStatus.FAILED)


def all_queues() -> list[str]:
    """Every kind of work's queue (daneshyar/config/background.py), named
    with this test run's own prefix (tests/settings.py)."""
    return [
        settings.INGEST_QUEUE,
        settings.SOURCES_QUEUE,
        settings.EVALUATION_QUEUE,
        settings.MAINTENANCE_QUEUE,
        settings.WEBHOOK_QUEUE,
    ]


def purge_queue() -> None:
    with celery_app.connection_for_write() as conn:
        for queue in all_queues():
            conn.default_channel.queue_purge(queue)


def _close_connections(**kwargs: Any) -> None:
    # The worker thread's connection would otherwise outlive the test
    # database (CONN_MAX_AGE keeps it open between tasks).
    connections.close_all()


@contextmanager
def running_worker(queues: list[str] | None = None) -> Iterator[WorkController]:
    """A worker thread on the real broker (every queue unless ``queues``
    says); stop it before the database goes."""
    task_postrun.connect(_close_connections, weak=False)
    try:
        with start_worker(
            celery_app,
            queues=queues or all_queues(),
            pool="solo",
            concurrency=1,
            perform_ping_check=False,
            loglevel="WARNING",
            shutdown_timeout=60,
        ) as worker:
            yield worker
    finally:
        task_postrun.disconnect(_close_connections)


@pytest.fixture
def celery_worker(transactional_db: None) -> Iterator[WorkController]:
    """Started after the test database and stopped before it is flushed."""
    purge_queue()
    with running_worker() as worker:
        yield worker
    purge_queue()


def wait_for(
    resource_id: uuid.UUID | str,
    *,
    statuses: tuple[str, ...] = FINISHED,
    timeout: float = 120,
    check: Callable[[Resource], None] | None = None,
) -> Resource:
    """Poll until the resource reaches one of ``statuses``; ``check`` runs on every poll."""
    deadline = time.monotonic() + timeout
    while True:
        resource = Resource.objects.get(pk=resource_id)
        if check is not None:
            check(resource)
        if resource.status in statuses and (
            resource.status not in FINISHED or resource.ingest_heartbeat_at is None
        ):
            return resource
        if time.monotonic() > deadline:
            raise AssertionError(f"resource {resource_id} still {resource.status} after {timeout}s")
        time.sleep(0.05)


ROOT = Path(__file__).resolve().parent.parent


def worker_process(
    *args: str, env: dict[str, str] | None = None, script: str | None = None, log: Path | None = None
) -> subprocess.Popen[bytes]:
    """``celery worker`` in its own process, on this test database and broker,
    taking every queue of this run unless ``args`` names some (``-Q``).

    ``script``: a Python file (relative to the repository) that starts the
    worker instead of ``-m celery`` (it gets ``worker`` and ``args``).
    """
    if not any(arg in ("-Q", "--queues") or arg.startswith("--queues=") for arg in args):
        args = (*args, "--queues", ",".join(all_queues()))
    connection.ensure_connection()
    params = connection.get_connection_params()
    name = connection.settings_dict["NAME"]
    full_env = {
        **os.environ,
        "DATABASE_URL": f"postgresql://postgres@/{name}?host={params['host']}",
        "DATABASE_CONN_MAX_AGE": "0",
        **(env or {}),
    }
    command = [sys.executable, script] if script else [sys.executable, "-m", "celery", "-A", "daneshyar"]
    output = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115 (closed with the process)
    return subprocess.Popen(
        [*command, "worker", "--loglevel=WARNING", *args],
        cwd=ROOT,
        env=full_env,
        stdout=output,
        stderr=subprocess.STDOUT,
    )


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Warm shutdown, then kill what is left (a pool child included)."""
    if process.poll() is None:
        children = pool_children(process.pid)
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def pool_children(pid: int) -> set[int]:
    """The pids of a process's children (a prefork worker's pool)."""
    try:
        listed = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except FileNotFoundError:
        return set()
    return {int(child) for child in listed.split()}


def batch_upload(tenant: Any, count: int, tag: str) -> list[str]:
    """``count`` short text documents titled ``{tag} {i}``, sent as one batch
    with ``tenant``'s key (202): their ids, for a worker to ingest."""
    documents = [{"title": f"{tag} {i}", "text": f"{tag} document number {i}."} for i in range(count)]
    response = tenant.client().post(
        f"/api/v1/workspaces/{tenant.workspace.id}/resources/batch/", documents, format="json"
    )
    assert response.status_code == 202, response.json()
    return [d["resource"]["id"] for d in response.json()["data"]["documents"]]


def file_upload(tenant: Any, name: str, data: bytes) -> str:
    """One file uploaded as ``name`` with ``tenant``'s admin key (202): its id."""
    response = tenant.client("admin").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/resources/",
        {"file": SimpleUploadedFile(name, data)},
        format="multipart",
    )
    assert response.status_code == 202, response.json()
    return str(response.json()["data"]["id"])
