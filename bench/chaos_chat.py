#!/usr/bin/env python3
"""Chat under load: many end users posting turns at once through a real
server; nothing may fail with a 5xx, and every session must stay contiguous.

Usage:
  .venv/bin/python bench/chaos_chat.py [--users 50] [--turns 6] [--web-concurrency 2] [--threads 8]

What runs: gunicorn with the project's settings (daneshyar/gunicorn.py) on a
free port, on its own database ``daneshyar_bench_chaos_chat`` of the
configured server (embedded by default), answering with the extractive
engine (the embedded default: no generation, real retrieval, real
embeddings). A workspace holds 200 SciFact abstracts (read in place from
../shared/datasets/scifact). --users end users of one API key each post
--turns turns in one session, all at once (one thread each). The
organization's rate limits are raised for the run (the point is the server's
behaviour under load, not the limits).

Printed: turns, status codes, 5xx count, sessions whose messages are not
exactly 0..2n-1 (a question without its reply, a gap, a duplicate),
p50/p95 seconds per turn. Exit status 1 if any check fails.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import _django, scifact  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--web-concurrency", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--abstracts", type=int, default=200)
    args = parser.parse_args()

    _django.setup("chaos_chat")
    import dataclasses

    import httpx
    from django.db import connection

    from chat.models import Message, Session
    from workspaces import services
    from workspaces.models import ApiKeyScope, Organization

    full = scifact.load()
    data = dataclasses.replace(full, corpus=full.corpus[: args.abstracts])
    workspace = scifact.load_workspace(data, scifact.embeddings(full)[: args.abstracts], name="chaos-chat")
    Session.objects.filter(workspace=workspace).delete()
    Organization.objects.filter(pk=workspace.organization_id).update(
        rate_chat_per_minute=1_000_000,
        rate_chat_per_user_per_minute=1_000_000,
        rate_requests_per_minute=1_000_000,
    )
    key = services.api_key_create(organization=workspace.organization, name="chaos", scope=ApiKeyScope.CHAT)
    claims = list(data.queries.values())

    params = connection.get_connection_params()
    database = connection.settings_dict["NAME"]
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"postgresql://postgres@/{database}?host={params['host']}",
        "WEB_CONCURRENCY": str(args.web_concurrency),
        "WEB_THREADS": str(args.threads),
    }
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "python:daneshyar.gunicorn",
            "daneshyar.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait(base, httpx)
        url = f"{base}/api/v1/workspaces/{workspace.id}/chat/"
        headers = {"X-API-Key": key.plaintext}
        # Warm every worker process (the embedding model loads on first use).
        for n in range(args.web_concurrency * 2):
            httpx.post(
                url,
                json={"external_user_id": f"warm-{n}", "message": "warm up"},
                headers=headers,
                timeout=300,
            )
        statuses: Counter[int] = Counter()
        seconds: list[float] = []
        sessions: dict[str, str] = {}
        lock = threading.Lock()
        start = threading.Barrier(args.users)

        def user(n: int) -> None:
            with httpx.Client(headers=headers, timeout=300) as client:
                start.wait()
                session_id = None
                for turn in range(args.turns):
                    body = {
                        "external_user_id": f"user-{n}",
                        "message": claims[(n * args.turns + turn) % len(claims)],
                    }
                    if session_id:
                        body["session_id"] = session_id
                    began = time.perf_counter()
                    response = client.post(url, json=body)
                    took = time.perf_counter() - began
                    with lock:
                        statuses[response.status_code] += 1
                        seconds.append(took)
                    if response.status_code == 200 and session_id is None:
                        session_id = response.json()["data"]["session"]["id"]
                        with lock:
                            sessions[f"user-{n}"] = session_id

        began = time.perf_counter()
        threads = [threading.Thread(target=user, args=(n,)) for n in range(args.users)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - began
    finally:
        server.terminate()
        server.wait(timeout=120)

    broken = []
    for name, session_id in sessions.items():
        sequences = list(
            Message.objects.filter(session_id=session_id)
            .order_by("sequence")
            .values_list("sequence", flat=True)
        )
        if sequences != list(range(len(sequences))) or len(sequences) % 2:
            broken.append(name)
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    errors = sum(count for status, count in statuses.items() if status >= 500)
    print(
        f"{args.users} end users x {args.turns} turns = {sum(statuses.values())} turns in {wall:.1f} s "
        f"({sum(statuses.values()) / wall:.1f} turns/s), "
        f"gunicorn {args.web_concurrency} x {args.threads} threads"
    )
    print(f"status codes: {dict(sorted(statuses.items()))}; 5xx: {errors}")
    print(f"sessions: {len(sessions)}, not contiguous: {len(broken)} {broken[:5]}")
    print(f"seconds per turn: p50 {statistics.median(ordered):.3f}, p95 {p95:.3f}")
    ok = errors == 0 and not broken and len(sessions) == args.users
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(base: str, httpx: object) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:  # type: ignore[attr-defined]
                return
        except Exception:
            time.sleep(0.3)
            continue
        time.sleep(0.3)
    raise SystemExit("the server did not start")


if __name__ == "__main__":
    sys.exit(main())
