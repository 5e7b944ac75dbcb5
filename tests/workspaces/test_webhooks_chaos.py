"""The acceptance run of issue 34's webhooks: 1,000 events to a real local
receiver, the delivery worker (a real Celery process) killed with SIGKILL
twice mid-delivery and started again, the receiver down for a minute. At the
end every event was received at least once, each signature verifies with
the Standard Webhooks scheme, and the events about one subject arrived in the
order they were emitted. Short retry delays (WEBHOOK_RETRY_DELAYS) keep it
within about two minutes; what a killed worker was posting is taken again by
the sweep (its claim's deadline passes), not by the broker."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections, transaction

from tests.conftest import Tenant
from tests.worker import purge_queue, stop_process, worker_process
from tests.workspaces.webhook_receiver import Receiver, receiver, signature_verifies
from workspaces.models import DeliveryStatus, WebhookDelivery, WebhookEvent
from workspaces.tasks import webhook_sweep
from workspaces.webhooks.events import webhook_events_emit
from workspaces.webhooks.services import webhook_create

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

EVENTS = 1000
SUBJECTS = 100
DOWN_SECONDS = 60
WORKER_ENV = {
    "WEBHOOK_TIMEOUT_SECONDS": "2",
    "WEBHOOK_RETRY_DELAYS": ",".join(["1", "2"] + ["3"] * 40),
}


def _start_worker(log: Path) -> subprocess.Popen[bytes]:
    return worker_process(
        "--queues", settings.WEBHOOK_QUEUE, "--pool", "threads", "--concurrency", "4",
        env=WORKER_ENV, log=log,
    )  # fmt: skip


@contextmanager
def _sweeping(every: float = 2.0) -> Iterator[None]:
    """Beat's part: the real sweep task, run here every ``every`` seconds."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every):
            webhook_sweep()
        connections.close_all()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=30)


def _until(condition: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _emit(tenant: Tenant) -> None:
    for start in range(0, EVENTS, 100):
        with transaction.atomic():
            webhook_events_emit(
                workspace_id=tenant.workspace.id,
                events=[
                    (WebhookEvent.RESOURCE_READY, f"subject-{n % SUBJECTS}", {"n": n})
                    for n in range(start, start + 100)
                ],
            )


def _received(state: Receiver, count: int) -> Callable[[], bool]:
    return lambda: len(state.received) >= count


def _kill(process: subprocess.Popen[bytes]) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.wait()


def test_a_thousand_events_survive_two_kills_and_a_minute_down(owner: Tenant, tmp_path: Path) -> None:
    purge_queue()
    worker = _start_worker(tmp_path / "worker-1.log")
    try:
        with receiver() as first:
            port = int(first.url.split(":")[2].split("/")[0])
            secret = webhook_create(workspace=owner.workspace, url=first.url).secret
            with _sweeping():
                _emit(owner)
                state = first
                for n, at in enumerate((150, 400), start=2):
                    _until(_received(state, at), timeout=90)
                    _kill(worker)  # mid-delivery: four threads were posting
                    worker = _start_worker(tmp_path / f"worker-{n}.log")
                _until(_received(state, 600), timeout=90)
        time.sleep(DOWN_SECONDS)  # the receiver is down: attempts fail, retried
        with receiver(port=port, state=state), _sweeping():
            _until(_all_delivered, timeout=150)
    finally:
        stop_process(worker)
        purge_queue()
    _check(state, secret)


def _all_delivered() -> bool:
    return not WebhookDelivery.objects.exclude(status=DeliveryStatus.DELIVERED).exists()


def _check(state: Receiver, secret: str) -> None:
    emitted = dict(WebhookDelivery.objects.values_list("event_id", "payload"))
    assert len(emitted) == EVENTS
    assert {r.headers["webhook-id"] for r in state.received} >= set(emitted)
    assert all(signature_verifies(secret, r) for r in state.received)
    first_seen: dict[str, list[int]] = {}
    seen: set[str] = set()
    for r in state.received:
        if r.headers["webhook-id"] in seen:
            continue  # a redelivery (at least once)
        seen.add(r.headers["webhook-id"])
        n = json.loads(r.body)["data"]["n"]
        first_seen.setdefault(f"subject-{n % SUBJECTS}", []).append(n)
    assert len(first_seen) == SUBJECTS
    assert all(ns == sorted(ns) for ns in first_seen.values()), "order per subject broken"
    retried = WebhookDelivery.objects.filter(attempts__gt=1).count()
    assert retried  # the minute down did make retries
    print(
        f"\n{EVENTS} events: {len(state.received)} posts received, {len(state.received) - len(seen)} "
        f"of them again (at least once), {retried} deliveries retried"
    )
