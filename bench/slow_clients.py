#!/usr/bin/env python3
"""Idle half-sent requests against the web tier's topologies (issue 23, "Eight
idle connections stall the web tier").

Usage (from the repository root):

    .venv/bin/python bench/slow_clients.py [--workers 1] [--threads 8] [--topology gunicorn nginx devproxy]

For each topology, starts gunicorn with the project's settings
(daneshyar/gunicorn.py; ``--workers``/``--threads`` as ``make run`` has them,
1 x 8, or compose, 2 x 8) and, in front of it:

* ``gunicorn``: nothing — how ``make run`` and compose served before;
* ``nginx``: deploy/nginx.conf (compose's proxy; needs the nginx binary);
* ``devproxy``: daneshyar/devproxy.py (``make run``'s proxy);
* ``gevent``: nothing, gunicorn's gevent worker instead of gthread (one of
  the options for ``make run``; needs ``gevent`` importable, e.g.
  ``pip install --target .data/gevent gevent`` and ``PYTHONPATH=.data/gevent``;
  not a dependency of the project).

Then prints how many connections that each sent half a request line
(``GET /healthz HTTP/1.1 … X-Slow: `` without its end) the front survives —
the most of the counts tried with which a normal ``GET /healthz`` still
answers within 3 s — and the latency of normal requests (median and
slowest of 20) among 200 such connections. Needs the database settings of a
normal run (the embedded PostgreSQL by default); /healthz does not query it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.nginx import nginx_in_front  # noqa: E402
from tests.slow_clients import free_port, half_sent_requests  # noqa: E402

COUNTS = [1, 4, 7, 8, 9, 15, 16, 17, 32, 200, 1000]


@contextmanager
def gunicorn(workers: int, threads: int, worker_class: str = "gthread") -> Iterator[str]:
    """gunicorn on a free port; yields host:port."""
    port = free_port()
    env = {**os.environ, "WEB_CONCURRENCY": str(workers), "WEB_THREADS": str(threads)}
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    command = [sys.executable, "-m", "gunicorn", "-c", "python:daneshyar.gunicorn"]
    command += ["daneshyar.wsgi:application"]
    command += ["--bind", f"127.0.0.1:{port}", "--graceful-timeout", "1", "--worker-class", worker_class]
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        process_group=0,
    )
    try:
        _wait(f"http://127.0.0.1:{port}")
        yield f"127.0.0.1:{port}"
    finally:
        os.killpg(process.pid, 9)
        process.wait()


@contextmanager
def devproxy(upstream: str) -> Iterator[int]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "daneshyar.devproxy", "--bind", f"127.0.0.1:{port}", "--upstream", upstream],
        cwd=ROOT,
    )
    try:
        _wait(f"http://127.0.0.1:{port}")
        yield port
    finally:
        process.terminate()
        process.wait()


def _wait(base: str) -> None:
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"{base} did not start")
        time.sleep(0.3)


def answers(url: str, timeout: float = 3.0) -> float | None:
    started = time.perf_counter()
    try:
        ok = httpx.get(url, timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return None
    return time.perf_counter() - started if ok else None


def measure(port: int) -> tuple[float, int, list[float] | None]:
    url = f"http://127.0.0.1:{port}/healthz"
    idle = [answers(url) or 0.0 for _ in range(20)]
    survived = 0
    for count in COUNTS:
        with half_sent_requests("127.0.0.1", port, count):
            if answers(url) is None:
                break
            survived = count
    with half_sent_requests("127.0.0.1", port, 200):
        latencies = [answers(url) for _ in range(20)]
    loaded = None if None in latencies else [t for t in latencies if t is not None]
    return statistics.median(idle), survived, loaded


@contextmanager
def front(topology: str, upstream: str) -> Iterator[int]:
    if topology in ("gunicorn", "gevent"):
        yield int(upstream.rpartition(":")[2])
    elif topology == "nginx":
        with nginx_in_front(upstream) as port:
            yield port
    else:
        with devproxy(upstream) as port:
            yield port


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--topology", nargs="+", default=["gunicorn", "nginx", "devproxy"])
    args = parser.parse_args()
    print(f"gunicorn gthread, {args.workers} worker(s) x {args.threads} threads; counts tried: {COUNTS}")
    columns = f"{'median ms @0':>13} {'survives':>9} {'median ms @200':>15} {'slowest ms @200':>16}"
    print(f"{'front':<10} {columns}")
    for topology in args.topology:
        worker_class = "gevent" if topology == "gevent" else "gthread"
        with (
            gunicorn(args.workers, args.threads, worker_class) as upstream,
            front(topology, upstream) as port,
        ):
            idle, survived, latencies = measure(port)
        shown = survived if survived < COUNTS[-1] else f">={survived}"
        if latencies is None:
            print(f"{topology:<10} {idle * 1000:>13.1f} {shown:>9} {'timed out':>15} {'timed out':>16}")
        else:
            median, slowest = statistics.median(latencies) * 1000, max(latencies) * 1000
            print(f"{topology:<10} {idle * 1000:>13.1f} {shown:>9} {median:>15.1f} {slowest:>16.1f}")


if __name__ == "__main__":
    main()
