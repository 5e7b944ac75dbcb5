#!/usr/bin/env python3
"""Ingestion under chaos: documents through a real Celery worker while the
worker is SIGKILLed and the broker restarted; every resource must end
``ready`` or ``failed``, none stuck, no duplicate passages.

Usage:
  .venv/bin/python bench/chaos_ingest.py [--documents 100] [--kills 5] [--broker-restarts 1]
      [--bad 3] [--concurrency 2] [--upload-seconds 10] [--deadline 900]

What runs: a private ``redis-server`` on a free port (no persistence, so a
restart loses every queued message; the shared Redis is never touched),
a ``celery worker`` (prefork, --concurrency children, as in
docker-compose.yml) and ``celery beat`` on their own database
``daneshyar_bench_chaos_ingest`` of the configured server (embedded by
default), with the sweep every 5 s and INGEST_STALE_AFTER_SECONDS=30 (its
minimum). The documents are SciFact
abstracts (read in place from ../shared/datasets/scifact) uploaded as text
through the upload service over --upload-seconds, plus --bad documents that
must fail (zip-bomb DOCX, a corrupt PDF), in a workspace emptied first.

Meanwhile, at even steps of progress (when 1/(n+1), 2/(n+1), ... of the
documents have finished, so that every event finds work in flight and a
backlog, on a fast machine or a slow one): --kills SIGKILLs, taking
turns between a pool child (what the OOM killer picks; the message is
rejected and redelivered at once) and the whole worker process group (main
process and pool: a lost machine; its unacknowledged messages wait for the
sweep), restarted right away; and --broker-restarts restarts of the
private broker (down 3 s; uploads meanwhile still answer and leave their
ingestion to the sweep).

Printed: each event with the resources processing and pending at that
moment, time, kills of each kind, broker restarts, resources ready /
failed (by code) / unfinished, attempts beyond the first, passages, and
duplicates (passages sharing a resource and span; counts that disagree with
passage_count; passages of failed resources). Exit status 1 if any resource
is unfinished at --deadline seconds, or any duplicate is found.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--documents", type=int, default=100, help="documents in all, --bad included")
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--broker-restarts", type=int, default=1)
    parser.add_argument("--bad", type=int, default=3, help="documents that must fail (bounds, corruption)")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--upload-seconds", type=float, default=10.0, help="uploads spread over this")
    parser.add_argument("--deadline", type=float, default=900.0, help="seconds to wait for the end")
    args = parser.parse_args()

    # Ctrl-C or a kill of this script still stops what it started.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
    scratch = Path(tempfile.mkdtemp(prefix="chaos-ingest-"))
    broker = Broker(port=_free_port(), folder=scratch)
    broker.start()
    try:
        return _run(args, broker, scratch)
    finally:
        # Whatever is still running; the shared Redis was never touched.
        for stop in reversed(_CLEANUP):
            with contextlib.suppress(Exception):
                stop()
        broker.stop()


_CLEANUP: list[Callable[[], None]] = []


def _run(args: argparse.Namespace, broker: Broker, scratch: Path) -> int:
    # Before Django reads its settings: this process enqueues on the private broker.
    os.environ["REDIS_URL"] = broker.url
    os.environ.pop("CELERY_BROKER_URL", None)

    from bench import _django, scifact

    _django.setup("chaos_ingest")
    from django.db import connection
    from django.db.models import Count, F

    from resources import services
    from resources.models import Resource, ResourceStatus
    from retrieval.models import Passage
    from tests.resources.files import make_zip_bomb_docx
    from workspaces.models import Organization, Workspace

    UNFINISHED = (ResourceStatus.PENDING, ResourceStatus.PROCESSING)
    organization, _ = Organization.objects.get_or_create(name="bench")
    workspace, _ = Workspace.objects.get_or_create(organization=organization, name="chaos-ingest")
    Resource.objects.filter(workspace=workspace).delete()

    corpus = scifact.load().corpus
    good = args.documents - args.bad
    documents: list[tuple[str, bytes]] = [
        (f"{doc['_id']}.txt", scifact.document_text(doc).encode()) for doc in corpus[:good]
    ]
    for n in range(args.bad):
        if n % 3 == 2:
            documents.append((f"broken-{n}.pdf", b"%%PDF-1.7\n1 0 obj << /Type /Catalog >> no xref %d" % n))
        else:
            documents.append((f"bomb-{n}.docx", make_zip_bomb_docx(40 * 1024 * 1024 + n)))
    # The failing ones spread among the others.
    documents.sort(key=lambda item: hash(item[0]) % 997)

    params = connection.get_connection_params()
    env = {
        **os.environ,
        "DATABASE_URL": f"postgresql://postgres@/{connection.settings_dict['NAME']}?host={params['host']}",
        "DATABASE_CONN_MAX_AGE": "0",
        "REDIS_URL": broker.url,
        "INGEST_STALE_AFTER_SECONDS": "30",
        "INGEST_SWEEP_INTERVAL_SECONDS": "5",
    }
    worker = Worker(env=env, concurrency=args.concurrency, folder=scratch)
    worker.start()
    _CLEANUP.append(worker.stop)
    # Beat on its own (as with several workers), so that killing the worker
    # kills exactly the worker and its pool.
    beat = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "daneshyar", "beat", "--loglevel=WARNING",
         "--schedule", str(scratch / "celerybeat-schedule")],
        cwd=ROOT,
        env=env,
        stdout=worker.log,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    _CLEANUP.append(lambda: _stop(beat))

    # Uploads while the broker is down answer anyway and log the failed
    # wake (resources/tasks.py, ingest_wake; or a robust on_commit callback);
    # count them instead of printing.
    lost_enqueues = _Counting()
    for name in ("django.db.backends.base", "resources.tasks"):
        robust_log = logging.getLogger(name)
        robust_log.addHandler(lost_enqueues)
        robust_log.propagate = False

    events: list[str] = []
    upload_errors: list[str] = []
    began = time.monotonic()

    def upload() -> None:
        gap = args.upload_seconds / max(len(documents), 1)
        for n, (name, data) in enumerate(documents):
            time.sleep(max(0.0, began + n * gap - time.monotonic()))
            try:
                services.resource_create(
                    workspace=workspace, upload=services.Upload(data=data, title=name, filename=name)
                )
            except Exception as exc:  # a refused upload is a finding, not a crash of the bench
                upload_errors.append(f"{name}: {type(exc).__name__}: {exc}")
        connection.close()

    uploader = threading.Thread(target=upload, name="uploader")
    uploader.start()

    # Chaos at even steps of progress, the broker restarts among the kills.
    steps = ["kill"] * args.kills
    for n in range(args.broker_restarts):
        steps.insert((n + 1) * len(steps) // (args.broker_restarts + 1), "broker")
    kills = Counter[str]()
    unfinished = Resource.objects.filter(workspace=workspace, status__in=UNFINISHED)
    finished = Resource.objects.filter(workspace=workspace).exclude(status__in=UNFINISHED)
    for position, step in enumerate(steps, start=1):
        threshold = len(documents) * position // (len(steps) + 1)
        while (done := finished.count()) < threshold and time.monotonic() < began + args.deadline:
            _sleep_supervised(time.monotonic() + 0.2, worker)
        busy = Counter(unfinished.values_list("status", flat=True))
        stamp = (
            f"{time.monotonic() - began:6.1f} s  ({done:3d} finished, "
            f"{busy[ResourceStatus.PROCESSING]:2d} processing, {busy[ResourceStatus.PENDING]:3d} pending)"
        )
        if step == "broker":
            broker.restart(down_seconds=3)
            events.append(f"{stamp}  broker restarted (down 3 s, queue lost)")
            continue
        kind = "pool child" if sum(kills.values()) % 2 == 0 else "worker group"
        killed = worker.kill_child() if kind == "pool child" else None
        if killed is None:
            kind = "worker group"
            worker.kill_group()
            worker.start()  # at once, as a restart policy would
        kills[kind] += 1
        events.append(f"{stamp}  SIGKILL {kind}" + (f" (pid {killed})" if killed else ""))
    uploader.join()

    deadline = began + args.deadline
    while time.monotonic() < deadline:
        if Resource.objects.filter(workspace=workspace).count() >= len(documents) - len(upload_errors) and (
            not unfinished.exists()
        ):
            break
        _sleep_supervised(time.monotonic() + 1, worker)
    wall = time.monotonic() - began
    _stop(beat)
    worker.stop()
    broker.stop()

    resources = Resource.objects.filter(workspace=workspace)
    statuses = Counter(resources.values_list("status", flat=True))
    codes = Counter(resources.filter(status=ResourceStatus.FAILED).values_list("error_code", flat=True))
    retried = Counter(resources.filter(attempts__gt=1).values_list("attempts", flat=True))
    passages = Passage.objects.filter(workspace=workspace)
    spans = passages.values("resource_id", "char_start", "char_end").annotate(n=Count("id"))
    same_span = spans.filter(n__gt=1).count()
    miscounted = resources.annotate(stored=Count("passages")).exclude(stored=F("passage_count")).count()
    of_failed = passages.filter(resource__status=ResourceStatus.FAILED).count()
    stuck = statuses[ResourceStatus.PENDING] + statuses[ResourceStatus.PROCESSING]
    duplicates = same_span + miscounted + of_failed

    print(
        f"{len(documents)} documents ({args.bad} built to fail) uploaded over {args.upload_seconds:.0f} s; "
        f"all finished after {wall:.1f} s; prefork worker --concurrency {args.concurrency}, "
        f"sweep every 5 s, stale after 30 s"
    )
    for event in events:
        print(f"  {event}")
    print(
        f"kills: {sum(kills.values())} ({kills['pool child']} pool child, "
        f"{kills['worker group']} whole worker); broker restarts: {args.broker_restarts}"
    )
    print(
        f"resources: {sum(statuses.values())}; ready {statuses[ResourceStatus.READY]}, "
        f"failed {statuses[ResourceStatus.FAILED]} {dict(codes)}, unfinished {stuck}"
    )
    print(f"attempts beyond the first: {dict(sorted(retried.items())) or 'none'} (attempts: resources)")
    print(
        f"passages: {passages.count()}; duplicates: {duplicates} "
        f"(same span {same_span}, count != passage_count {miscounted}, of failed resources {of_failed})"
    )
    print(
        f"worker exits on its own (restarted, as a container's restart policy would): {worker.exits} "
        f"{worker.exit_reasons}"
    )
    print(f"uploads whose enqueue failed (broker down; left to the sweep): {lost_enqueues.count}")
    if upload_errors:
        print(f"upload errors: {len(upload_errors)}: {upload_errors[:3]}")
    ok = stuck == 0 and duplicates == 0 and not upload_errors
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


class _Counting(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


class Broker:
    """A private redis-server without persistence."""

    def __init__(self, *, port: int, folder: Path):
        self.port = port
        self.folder = folder
        self.url = f"redis://127.0.0.1:{port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.1)
        raise SystemExit("the private redis-server did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def restart(self, *, down_seconds: float) -> None:
        self.stop()
        time.sleep(down_seconds)
        self.start()


class Worker:
    """``celery worker`` (prefork) in its own process group."""

    def __init__(self, *, env: dict[str, str], concurrency: int, folder: Path):
        self.env = env
        self.concurrency = concurrency
        self.folder = folder
        self.process: subprocess.Popen[bytes] | None = None
        self.log = open(folder / "worker.log", "ab")  # noqa: SIM115 (closed at exit)
        self.exits = 0
        self.exit_reasons = Counter[str]()

    def supervise(self) -> None:
        """Restart the worker if it exited by itself (not killed by us)."""
        if self.process is not None and self.process.poll() is not None:
            self.exits += 1
            self.exit_reasons[_last_error(self.folder / "worker.log")] += 1
            self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "daneshyar", "worker", "--pool=prefork",
             f"--concurrency={self.concurrency}", "--loglevel=WARNING", "--queues", "ingest,maintenance"],
            cwd=ROOT,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip

    def kill_child(self) -> int | None:
        """SIGKILL one pool child; ``None`` when there is none yet."""
        assert self.process is not None
        pid = self.process.pid
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except FileNotFoundError:
            return None
        pool = [int(c) for c in children]
        if not pool:
            return None
        os.kill(pool[0], signal.SIGKILL)
        return pool[0]

    def kill_group(self) -> None:
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill_group()
        if self.process is not None:
            # Whatever the group left behind (a pool child of a killed parent).
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
        self.log.close()


def _sleep_supervised(until: float, worker: Worker) -> None:
    """Sleep, restarting the worker whenever it has exited on its own."""
    while True:
        worker.supervise()
        left = until - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, 0.5))


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _last_error(log: Path) -> str:
    """The worker's last CRITICAL line, shortened."""
    lines = [line for line in log.read_text(errors="replace").splitlines() if "CRITICAL" in line]
    return lines[-1].split("]", 1)[-1].strip()[:80] if lines else "no CRITICAL line"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


if __name__ == "__main__":
    sys.exit(main())
