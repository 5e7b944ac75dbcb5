#!/usr/bin/env python
"""One organization's bulk upload against everyone else's background work,
through the running service (``make run``'s arrangement: a worker per kind
of work, daneshyar/config/background.py), on the real broker.

    .venv/bin/python bench/background_work.py          # Redis database 12, emptied first
    .venv/bin/python bench/background_work.py --documents 1000 --rounds 1   # a quick look

Starts ``python -m daneshyar.devserver`` on a fresh data directory (embedded
PostgreSQL, the five workers and beat) with its own Redis database, then,
each round:

- organization A uploads ``--documents`` SciFact abstracts, one request
  each, from four client threads (``../shared/datasets/scifact``);
- once A's backlog is waiting, organization B uploads one document, starts
  an evaluation run of 10 items and the sync of a 20-page local site;
- organization C's sources at the same time: a page that trickles one byte
  a second, and a site whose robots.txt asks ``Crawl-delay: 60``.

Prints per round and their median: when B's document was ready, when B's
evaluation run started (``running``) and finished, when B's sync made its
first request to the site and finished, each counted from the moment it
was asked for; the lag of each beat sweep (from beat sending it to a worker
starting it, read from the service's log); the longest each queue was
(sampled every half second); how long C's trickling page held its fetch.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import psutil
import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.resources.fixture_site import Site, serving  # noqa: E402

SCIFACT = ROOT.parent / "shared" / "datasets" / "scifact" / "corpus.jsonl"
KINDS = ("ingest", "sources", "evaluations", "maintenance", "webhooks")


def start(port: int, data_dir: Path, redis_url: str) -> tuple[subprocess.Popen[str], dict[str, str], Path]:
    env = {**os.environ, "PORT": str(port), "DANESHYAR_DATA_DIR": str(data_dir), "REDIS_URL": redis_url}
    # The local sites live on 127.0.0.1; many requests from one key.
    env.update(OUTBOUND_ALLOW_PRIVATE="true", WEBHOOK_ALLOW_PRIVATE="true", RATE_LIMIT_ENABLED="false")
    env.update(SOURCES_FETCH_TIMEOUT_SECONDS="20")
    log_path = data_dir.parent / f"{data_dir.name}.log"
    log = log_path.open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "daneshyar.devserver"], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=log, text=True,
    )  # fmt: skip
    assert server.stdout is not None
    found: dict[str, str] = {}
    for line in server.stdout:
        log.write(line)
        if match := re.match(r"\s+export (BASE|KEY|WS)=(\S+)", line):
            found[match[1]] = match[2]
        if len(found) == 3:
            threading.Thread(target=lambda: [log.write(rest) for rest in server.stdout], daemon=True).start()  # type: ignore[union-attr]
            return server, found, log_path
    raise SystemExit(f"the service stopped before it was ready: see {log_path}")


def service_database(server: subprocess.Popen[str]) -> str:
    """The DATABASE_URL make run hands its children (its embedded server)."""
    for child in psutil.Process(server.pid).children(recursive=True):
        with contextlib.suppress(psutil.Error):
            url = str(child.environ().get("DATABASE_URL", ""))
            if url:
                return url
    raise SystemExit("no child of the service names its database")


def manage(service: tuple[str, Path], *args: str) -> dict[str, Any]:
    """``manage.py`` on the service's database, with its secrets (the data
    directory's: an API key's hash must be the service's)."""
    database, data_dir = service
    env = {**os.environ, "DATABASE_URL": database, "DANESHYAR_DATA_DIR": str(data_dir)}
    out = subprocess.run(
        [sys.executable, "manage.py", *args, "--json"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if out.returncode:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{out.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(out.stdout)
    return result


class Tenant:
    def __init__(self, service: tuple[str, Path], base: str, name: str) -> None:
        organization = manage(service, "create_organization", name)["id"]
        self.workspace = manage(service, "create_workspace", organization, name)["id"]
        key = manage(service, "create_api_key", organization, "--scope", "admin", "--name", name)
        self.client = httpx.Client(
            base_url=f"{base}/workspaces/{self.workspace}/", headers={"X-API-Key": key["key"]}, timeout=60
        )

    def post(self, path: str, body: Any = None, **kwargs: Any) -> dict[str, Any]:
        response = self.client.post(path, json=body, **kwargs)
        assert response.status_code < 300, (path, response.status_code, response.text)
        data: dict[str, Any] = response.json()["data"]
        return data

    def get(self, path: str) -> Any:
        response = self.client.get(path)
        assert response.status_code == 200, (path, response.text)
        return response.json()["data"]


def abstracts(count: int, offset: int) -> list[dict[str, str]]:
    rows = []
    with SCIFACT.open() as file:
        for line in file:
            rows.append(json.loads(line))
    return [
        {"title": r["title"], "text": f"{r['text']} ({offset})"} for r in (rows * 4)[offset : offset + count]
    ]


def upload_all(tenant: Tenant, documents: list[dict[str, str]], threads: int = 4) -> list[int]:
    """Start uploading from ``threads`` clients; the count done so far, updated."""
    done = [0]

    def worker(part: list[dict[str, str]]) -> None:
        for document in part:
            tenant.post("resources/", document)
            done[0] += 1

    pool = [
        threading.Thread(target=worker, args=(documents[n::threads],), daemon=True) for n in range(threads)
    ]
    for thread in pool:
        thread.start()
    return done


def until(check: Any, timeout: float, step: float = 0.2) -> float:
    began = time.monotonic()
    while not check():
        if time.monotonic() - began > timeout:
            return float("nan")
        time.sleep(step)
    return time.monotonic() - began


@contextmanager
def trickling(every: float = 1.0) -> Iterator[str]:
    """A page that sends one byte a second for ever (until the fetch gives up)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/robots.txt":
                self.send_response(404)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            began = time.monotonic()
            try:
                while time.monotonic() - began < 600:
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(every)
            except OSError:
                held.append(time.monotonic() - began)

        def log_message(self, *args: Any) -> None:
            pass

    held: list[float] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/slow"
    finally:
        server.shutdown()
        trickling.held = held  # type: ignore[attr-defined]


def sweep_lags(log: Path, since: datetime) -> dict[str, float]:
    """Beat's "Sending due task NAME (TASK)" to the worker's "Task TASK[...] received"."""
    stamp = r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})"
    sent: dict[str, list[datetime]] = defaultdict(list)
    lags: dict[str, float] = {}
    for line in log.read_text(errors="replace").splitlines():
        when = re.search(stamp, line)
        if when is None:
            continue
        at = datetime.strptime(when[1], "%Y-%m-%d %H:%M:%S,%f")
        if at < since:
            continue
        if match := re.search(r"Sending due task \S+ \(([\w.]+)\)", line):
            sent[match[1]].append(at)
        elif (match := re.search(r"Task ([\w.]+)\[[\w-]+\] received", line)) and sent.get(match[1]):
            queued = sent[match[1]].pop(0)
            lags[match[1]] = max(lags.get(match[1], 0.0), (at - queued).total_seconds())
    return lags


def run_round(
    args: argparse.Namespace, service: tuple[str, Path], base: str, log: Path, n: int
) -> dict[str, float]:
    client = redis.Redis.from_url(args.redis)
    since = datetime.now()
    a, b, c = (Tenant(service, base, f"bench-{who}-{n}") for who in ("A", "B", "C"))
    longest: dict[str, int] = dict.fromkeys(KINDS, 0)
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.is_set():
            for kind in KINDS:
                longest[kind] = max(longest[kind], int(client.llen(kind)))  # type: ignore[arg-type]
            time.sleep(0.5)

    threading.Thread(target=sample, daemon=True).start()
    uploaded = upload_all(a, abstracts(args.documents, n * args.documents))
    until(lambda: uploaded[0] >= min(300, args.documents), 300)  # a backlog waits
    site = Site(
        pages={
            f"/page-{i}": f"<title>Page {i}</title><p>Page {i} of the handbook.</p>".encode()
            for i in range(20)
        }
    )
    slow_site = Site(pages={"/page": b"<p>slow</p>"}, robots=b"User-agent: *\nCrawl-delay: 60\n")
    figures: dict[str, float] = {}
    with serving(site), serving(slow_site), trickling() as slow_page:
        trickle = c.post("sources/", {"kind": "pages", "urls": [slow_page]})
        delayed = c.post("sources/", {"kind": "sitemap", "urls": [slow_site.url("/sitemap.xml")]})
        for source in (trickle, delayed):
            c.post(f"sources/{source['id']}/sync/")
        asked = time.monotonic()
        doc = b.post(
            "resources/", {"title": "B's handbook", "text": "The handbook of B: returns take 30 days."}
        )
        test_set = b.post("test-sets/", {"name": "B"})
        items = "\n".join(
            json.dumps({"question": f"How long do returns take? ({i})", "expected_resource_ids": [doc["id"]]})
            for i in range(10)
        )
        b.post(
            f"test-sets/{test_set['id']}/import/",
            content=items,
            headers={"Content-Type": "application/x-ndjson"},
        )
        run_at = time.monotonic()
        run = f"evaluations/{b.post('evaluations/', {'test_set_id': test_set['id']})['id']}/"
        source = b.post("sources/", {"kind": "sitemap", "urls": [site.url("/sitemap.xml")]})
        sync_at = time.monotonic()
        b.post(f"sources/{source['id']}/sync/")
        runs = f"sources/{source['id']}/runs/"
        events: dict[str, tuple[float, Callable[[], bool]]] = {
            "B document ready, s": (asked, lambda: b.get(f"resources/{doc['id']}/")["status"] == "ready"),
            "B evaluation started, s": (run_at, lambda: b.get(run)["status"] != "pending"),
            "B evaluation finished, s": (run_at, lambda: b.get(run)["status"] in ("completed", "failed")),
            "B sync started, s": (sync_at, lambda: bool(site.requests)),
            "B sync finished, s": (sync_at, lambda: b.get(runs)["items"][0]["status"] != "running"),
        }
        deadline = time.monotonic() + 900
        while events and time.monotonic() < deadline:
            for name, (since_at, happened) in list(events.items()):
                if happened():
                    figures[name] = time.monotonic() - since_at
                    del events[name]
            time.sleep(0.2)
        figures.update(dict.fromkeys(events, float("nan")))
        time.sleep(args.settle)
        # The Crawl-delay site's run waits in the queue, holding no worker:
        # its requests so far (robots.txt, then one a minute at most).
        figures["C Crawl-delay site requests"] = float(len(slow_site.requests))
        state = c.get(f"sources/{delayed['id']}/runs/")["items"][0]["status"]
        figures["C Crawl-delay run still running"] = float(state == "running")
    sampling.set()
    held = getattr(trickling, "held", [])
    figures["C trickling page held, s"] = max(held) if held else float("nan")
    for task, lag in sweep_lags(log, since).items():
        figures[f"lag {task}, s"] = lag
    for kind, length in longest.items():
        figures[f"longest queue {kind}"] = float(length)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--port", type=int, default=8095)
    parser.add_argument("--documents", type=int, default=5000, help="A's upload, per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--settle", type=float, default=90, help="seconds of sweeps observed after B's work")
    parser.add_argument(
        "--redis", default="redis://127.0.0.1:6379/12", help="a Redis database of its own: emptied first"
    )
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    redis.Redis.from_url(args.redis).flushdb()
    bench_dir = ROOT / ".data" / "bench"
    bench_dir.mkdir(parents=True, exist_ok=True)
    data_dir = Path(tempfile.mkdtemp(prefix="background-", dir=bench_dir))
    server, variables, log = start(args.port, data_dir, args.redis)
    rounds: list[dict[str, float]] = []
    service = (service_database(server), data_dir)
    try:
        for n in range(args.rounds):
            figures = run_round(args, service, variables["BASE"], log, n)
            rounds.append(figures)
            print(f"round {n + 1}: " + json.dumps({k: round(v, 1) for k, v in figures.items()}), flush=True)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=120)
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)
    print(f"\nmedian of {len(rounds)} rounds, A uploading {args.documents} documents each:")
    for name in rounds[0]:
        values = [r[name] for r in rounds if name in r]
        print(f"  {name:45s} {statistics.median(values):8.1f}   ({', '.join(f'{v:.1f}' for v in values)})")


if __name__ == "__main__":
    main()
