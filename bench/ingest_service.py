#!/usr/bin/env python3
"""Ingestion throughput through the running service, next to raw encode.

Usage: .venv/bin/python bench/ingest_service.py [--limit N] [--base-url URL --api-key KEY]
       [--worker-concurrency N] [--bulk-size N] [--clients N] [--corpus PATH]

Uploads the SciFact corpus (../shared/datasets/scifact, read in place) to the
service over HTTP, twice, each into a fresh workspace:

1. one document per request (``POST …/resources/`` with ``{title, text}``,
   ``--clients`` requests in flight), as an integrator syncing documents
   one by one would;
2. through the bulk endpoint (``POST …/resources/batch/``, ``--bulk-size``
   documents per request);

and times each from the first request until every resource has left
``pending``/``processing``. Next to them, in the same run, raw encode: this
process chunks the same documents with the service's chunker and embeds
the passages with the same backend (EMBEDDING_BACKEND, in-process, no
service), before and after the service runs; the figure is the mean of the
two. Printed: documents/s, passages/s and tokens/s (word pieces embedded),
and the ratios to raw encode in tokens/s.

Without ``--base-url`` the service is started as ``make run`` starts it
(``python -m daneshyar.devserver``: embedded PostgreSQL, gunicorn, one Celery
worker with beat, the filesystem broker) on its own data directory
(.data/bench-service) and a free port, with rate limits off
(RATE_LIMIT_ENABLED=false: several thousand uploads a minute from one key is
the point here), and stopped at the end. With ``--base-url`` the service
given must allow that many uploads (RATE_LIMIT_ENABLED=false, or
RATE_LIMIT_UPLOADS_PER_MINUTE and RATE_LIMIT_REQUESTS_PER_MINUTE above the
rate of the run) and ``--api-key`` must be an admin key; the two workspaces
are left in place.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "datasets" / "scifact" / "corpus.jsonl"
DATA_DIR = ROOT / ".data" / "bench-service"


class Api:
    def __init__(self, base_url: str, api_key: str):
        self.base = base_url.rstrip("/")
        self.key = api_key

    def call(self, method: str, path: str, body: Any = None, *, attempts: int = 5) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        for attempt in range(attempts):
            # The base URL is the operator's own service (--base-url or the one started here).
            request = urllib.request.Request(  # noqa: S310
                self.base + path,
                data=data,
                method=method,
                headers={"X-API-Key": self.key, "Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310
                    return json.loads(response.read() or b"null")
            except urllib.error.HTTPError as exc:
                if exc.code in (429, 502, 503) and attempt + 1 < attempts:
                    time.sleep(float(exc.headers.get("Retry-After") or 1))
                    continue
                raise RuntimeError(f"{method} {path}: {exc.code} {exc.read()[:300]!r}") from exc
        raise AssertionError("unreachable")

    def unfinished(self, workspace: str) -> int:
        """Resources still pending or processing (0 once all are done)."""
        total = 0
        for status in ("pending", "processing"):
            page = self.call("GET", f"/api/v1/workspaces/{workspace}/resources/?status={status}&limit=100")
            total += len(page["data"]["items"])
        return total

    def summary(self, workspace: str) -> tuple[int, int, int]:
        """(ready, failed, passages) over every resource of the workspace."""
        ready = failed = passages = 0
        cursor = ""
        while True:
            page = self.call(
                "GET",
                f"/api/v1/workspaces/{workspace}/resources/?limit=100"
                + (f"&cursor={cursor}" if cursor else ""),
            )["data"]
            for item in page["items"]:
                ready += item["status"] == "ready"
                failed += item["status"] == "failed"
                passages += item["passage_count"]
            cursor = page["next_cursor"]
            if not cursor:
                return ready, failed, passages


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_service(concurrency: int) -> tuple[subprocess.Popen[bytes], str, str]:
    """``make run``'s server on its own data directory; (process, URL, admin key)."""
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    log_path = DATA_DIR / "service.log"
    port = _free_port()
    env = {
        **os.environ,
        "DANESHYAR_DATA_DIR": str(DATA_DIR),
        "PORT": str(port),
        "RATE_LIMIT_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    for name in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL"):
        env.pop(name, None)  # as make run: embedded database, filesystem broker
    if concurrency:
        env["CELERY_WORKER_CONCURRENCY"] = str(concurrency)
    log = log_path.open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "daneshyar.devserver"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        text = log_path.read_text(errors="replace")
        key = re.search(r"API key\s+(dk_live_\S+)", text)
        if key:
            # The worker loads the model after the web server answers: wait for it.
            while "ready." not in log_path.read_text(errors="replace") and time.monotonic() < deadline:
                time.sleep(0.5)
            return process, f"http://127.0.0.1:{port}", key.group(1)
        if process.poll() is not None:
            raise SystemExit(f"the service exited; see {log_path}")
        time.sleep(0.5)
    process.terminate()
    raise SystemExit(f"the service did not start in 10 minutes; see {log_path}")


def stop_service(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(2)  # Ctrl-C: devserver stops its children and the database
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()


def wait_done(api: Api, workspace: str, expected: int) -> None:
    while api.unfinished(workspace):
        time.sleep(0.5)


def run_single(api: Api, workspace: str, docs: list[dict[str, str]], clients: int) -> float:
    began = time.perf_counter()
    path = f"/api/v1/workspaces/{workspace}/resources/"
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(lambda doc: api.call("POST", path, doc), docs))
    uploaded = time.perf_counter() - began
    wait_done(api, workspace, len(docs))
    seconds = time.perf_counter() - began
    print(f"  one per request: uploaded in {uploaded:.1f} s, all done in {seconds:.1f} s", file=sys.stderr)
    return seconds


def run_bulk(api: Api, workspace: str, docs: list[dict[str, str]], size: int) -> float:
    began = time.perf_counter()
    path = f"/api/v1/workspaces/{workspace}/resources/batch/"
    for start in range(0, len(docs), size):
        api.call("POST", path, docs[start : start + size])
    uploaded = time.perf_counter() - began
    wait_done(api, workspace, len(docs))
    seconds = time.perf_counter() - began
    print(f"  bulk: uploaded in {uploaded:.1f} s, all done in {seconds:.1f} s", file=sys.stderr)
    return seconds


def raw_encode(passages: list[str]) -> float:
    from retrieval.embeddings import get_embedder

    embedder = get_embedder()
    began = time.perf_counter()
    for start in range(0, len(passages), 256):  # the ingestion's slice (retrieval/indexing.py)
        embedder.embed_passages(passages[start : start + 256])
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--limit", type=int, default=0, help="first N documents (default: all 5,183)")
    parser.add_argument("--base-url", default="", help="a running service (default: start one)")
    parser.add_argument("--api-key", default="", help="an admin key of --base-url")
    parser.add_argument("--worker-concurrency", type=int, default=0, help="the started worker's processes")
    parser.add_argument("--bulk-size", type=int, default=500, help="documents per bulk request")
    parser.add_argument("--clients", type=int, default=4, help="one-per-request uploads in flight")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()
    if bool(args.base_url) != bool(args.api_key):
        parser.error("--base-url and --api-key go together")

    docs: list[dict[str, str]] = []
    with args.corpus.open(encoding="utf-8") as corpus:
        for line in corpus:
            row = json.loads(line)
            title = row["title"].strip()
            docs.append({"title": title, "text": f"{title}\n\n{row['text'].strip()}"})
            if args.limit and len(docs) >= args.limit:
                break

    # This process: the service's chunker and embedder, for raw encode.
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "daneshyar.settings")
    os.environ.setdefault("DANESHYAR_DATA_DIR", str(DATA_DIR))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import django

    django.setup()
    from django.conf import settings

    from resources.ingestion import resource_chunks
    from retrieval.embeddings import get_embedder

    chunks = [
        c for doc in docs for c in resource_chunks(data=doc["text"].encode(), content_type="text/plain")
    ]
    passages = [c.text for c in chunks]
    tokens = sum(c.token_count for c in chunks)
    get_embedder().embed_passages(passages[:16])  # load and warm up

    process = None
    if args.base_url:
        api = Api(args.base_url, args.api_key)
    else:
        print("==> starting the service as make run does", file=sys.stderr)
        process, base_url, key = start_service(args.worker_concurrency)
        api = Api(base_url, key)
    load = [os.getloadavg()[0]]
    try:
        raw_before = raw_encode(passages)
        print(f"  raw encode: {raw_before:.1f} s", file=sys.stderr)
        stamp = int(time.time())
        single_ws = api.call("POST", "/api/v1/workspaces/", {"name": f"bench-single-{stamp}"})["data"]["id"]
        bulk_ws = api.call("POST", "/api/v1/workspaces/", {"name": f"bench-bulk-{stamp}"})["data"]["id"]
        load.append(os.getloadavg()[0])
        single = run_single(api, single_ws, docs, args.clients)
        load.append(os.getloadavg()[0])
        bulk = run_bulk(api, bulk_ws, docs, args.bulk_size)
        load.append(os.getloadavg()[0])
        raw_after = raw_encode(passages)
        print(f"  raw encode again: {raw_after:.1f} s", file=sys.stderr)
        load.append(os.getloadavg()[0])
        results = {name: api.summary(ws) for name, ws in (("single", single_ws), ("bulk", bulk_ws))}
    finally:
        if process is not None:
            stop_service(process)

    raw = (raw_before + raw_after) / 2
    n, p = len(docs), len(passages)
    print(
        f"SciFact: {n} documents, {p} passages, {tokens:,} word pieces embedded; "
        f"backend {settings.EMBEDDING_BACKEND}"
        + (f" {settings.EMBEDDING_ONNX_PRECISION}" if settings.EMBEDDING_BACKEND == "onnx" else "")
        + f"; ingest batch {settings.INGEST_BATCH_SIZE}; "
        f"worker concurrency {args.worker_concurrency or 'default'}; cores {os.cpu_count()}; "
        f"load average {' -> '.join(f'{x:.1f}' for x in load)}"
    )
    rows = [
        (f"raw encode (mean of {raw_before:.1f} and {raw_after:.1f} s)", raw, p, None),
        ("service, one document per request", single, results["single"][2], results["single"]),
        (f"service, bulk ({args.bulk_size} per request)", bulk, results["bulk"][2], results["bulk"]),
    ]
    for label, seconds, stored, summary in rows:
        line = (
            f"{label:<40}: {seconds:7.1f} s  {n / seconds:7.2f} documents/s  "
            f"{stored / seconds:7.2f} passages/s  "
            f"{tokens / seconds:6.0f} tokens/s"
        )
        if summary is not None:
            ratio = (tokens / seconds) / (tokens / raw)
            line += f"  {ratio:.2f}x raw  ({summary[0]} ready, {summary[1]} failed, {summary[2]} passages)"
        print(line)


if __name__ == "__main__":
    main()
