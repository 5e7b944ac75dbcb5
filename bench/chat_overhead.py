#!/usr/bin/env python
"""Chat overhead through the running service: time per turn, generation excluded.

    .venv/bin/python bench/chat_overhead.py                    # starts the service itself
    .venv/bin/python bench/chat_overhead.py --base-url http://127.0.0.1:8000 --api-key dk_live_... \\
        --workspace <id>                                       # a service already running
    .venv/bin/python bench/chat_overhead.py --only-local       # local backend tokens/s
    .venv/bin/python bench/chat_overhead.py --skip-local --rounds 5   # each level 5 times: median, range

What is timed: whole ``POST /api/v1/workspaces/{id}/chat/`` requests over
HTTP, as a client sees them (gunicorn, API-key authentication, validation,
storing the question, query embedding, retrieval, prompt building with the
history, the call to the generation server, validating and storing the
reply, JSON rendering), at concurrency 1 and 8 (8 client threads, each with
its own connection and its own session, a new session every 25 turns).

Generation is a zero-latency stand-in: an OpenAI-compatible server in this
process (``GENERATION_BACKEND=openai`` pointed at it) that answers every
completion at once with a fixed valid reply. What it costs the service (one
HTTP round trip on loopback through the OpenAI client) stays in the figures,
as a real generation server's would; its own handling time is printed.

Without ``--base-url`` the service is started as ``make run`` starts it
(``python -m daneshyar.devserver``: embedded PostgreSQL, gunicorn with one
worker process of 8 threads, a Celery worker) with its own data directory
``.data/bench/chat-service`` (kept between runs; ``chat-service-absent``
with ``--unit-vectors absent``), ``SERVER_TIMING=true``,
``RATE_LIMIT_ENABLED=false`` and
the embedding backend of the environment (EMBEDDING_BACKEND, default onnx
int8), the worker's sweep of answer units' vectors off. The first
``--docs`` SciFact abstracts (``../shared/datasets/scifact``) are uploaded
through the API once and ingested by the service's worker, and their answer
units' vectors made with ``manage.py embed_units`` (``--unit-vectors
stored``, the default) or never (``absent``); the questions are SciFact
claims.

The share of query embedding comes from the service's own ``Server-Timing``
header (``embed``, ``search``, ``app``); against a service without
``SERVER_TIMING=true`` that column stays empty.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SCIFACT = ROOT.parent / "shared" / "datasets" / "scifact"
SERVICE_DATA = ROOT / ".data" / "bench" / "chat-service"
STAND_IN_MODEL = "generation-stand-in"
REPLY = json.dumps(
    {"type": "answer", "parts": [{"text": "A fixed answer from the stand-in.", "passage": None}]}
)


# --- the generation stand-in ----------------------------------------------------

STAND_IN_MS: list[float] = []


class StandIn(BaseHTTPRequestHandler):
    """Just enough of the OpenAI API: GET /v1/models and POST /v1/chat/completions."""

    protocol_version = "HTTP/1.1"
    # The head and the body go out as two writes: with Nagle's algorithm the
    # second waits for the client's delayed ACK (up to 40 ms on Linux), a
    # stall of this stand-in that a real server (uvicorn: TCP_NODELAY) has not.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send(
            {"object": "list", "data": [{"id": STAND_IN_MODEL, "object": "model", "owned_by": "bench"}]}
        )

    def do_POST(self) -> None:
        started = time.perf_counter()
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        prompt = sum(len(str(m.get("content", ""))) for m in request.get("messages", [])) // 4
        self._send(
            {
                "id": "chatcmpl-bench",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request.get("model", STAND_IN_MODEL),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": REPLY},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": prompt, "completion_tokens": 12, "total_tokens": prompt + 12},
            }
        )
        STAND_IN_MS.append((time.perf_counter() - started) * 1000)


def _host(hostname: str | None, base_url: str) -> str:
    if not hostname:
        raise SystemExit(f"no host in {base_url!r}")
    return hostname


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --- the service ------------------------------------------------------------------


class Service:
    """``python -m daneshyar.devserver`` in its own data directory, stopped on exit."""

    def __init__(self, stand_in_url: str, data_dir: Path) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.data_dir = data_dir
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "SEARCH_DATABASE_URL"}
        }
        env.update(
            DANESHYAR_DATA_DIR=str(data_dir),
            PORT=str(self.port),
            HOST="127.0.0.1",
            GENERATION_BACKEND="openai",
            OPENAI_BASE_URL=stand_in_url,
            OPENAI_MODEL=STAND_IN_MODEL,
            OPENAI_MAX_RETRIES="0",
            SERVER_TIMING="true",
            # Hundreds of turns a minute from one key: the point is the
            # service's own time, not its limits.
            RATE_LIMIT_ENABLED="false",
            LOG_LEVEL="WARNING",
            # The answer units' vectors are made by the bench (--unit-vectors),
            # not by the worker's sweep in the middle of the turns.
            UNIT_VECTORS_SWEEP_SECONDS="86400",
        )
        self.env = env
        data_dir.mkdir(parents=True, exist_ok=True)
        self.log = (data_dir / "service.log").open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "daneshyar.devserver"],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ready(self, timeout: float = 300) -> dict[str, str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"the service exited; see {self.data_dir / 'service.log'}")
            try:
                status, _, _ = request(self.base_url, "GET", "/healthz")
                if status == 200:
                    return dict(json.loads((self.data_dir / "demo.json").read_text()))
            except OSError:
                pass
            time.sleep(0.5)
        raise SystemExit(f"the service did not become ready in {timeout:.0f} s")

    def embed_units(self) -> None:
        """``manage.py embed_units`` against the service's database: the
        answer units' vectors of every passage that has none, in the foreground."""
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "manage.py", "embed_units"],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        print(f"{done.stdout.strip()} (in {time.perf_counter() - started:.0f} s with start-up)", flush=True)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # devserver stops its children and the database
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.log.close()


# --- HTTP client ------------------------------------------------------------------


def request(
    base_url: str,
    method: str,
    path: str,
    body: Any = None,
    key: str | None = None,
    conn: http.client.HTTPConnection | None = None,
) -> tuple[int, Any, str]:
    """One request: (status, JSON body or None, Server-Timing header)."""
    parts = urlsplit(base_url)
    own = conn is None
    conn = conn or http.client.HTTPConnection(_host(parts.hostname, base_url), parts.port, timeout=120)
    headers = {"Content-Type": "application/json"}
    if key:
        headers["X-API-Key"] = key
    try:
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        timing = response.getheader("Server-Timing") or ""
    finally:
        if own:
            conn.close()
    try:
        payload = json.loads(raw) if raw else None
    except ValueError:
        payload = None
    return response.status, payload, timing


def load_corpus(count: int) -> list[tuple[str, str]]:
    docs = []
    with (SCIFACT / "corpus.jsonl").open() as handle:
        for line in handle:
            row = json.loads(line)
            docs.append((row["title"][:400], row["text"]))
            if len(docs) == count:
                break
    return docs


def load_questions() -> list[str]:
    with (SCIFACT / "queries.jsonl").open() as handle:
        return [json.loads(line)["text"] for line in handle]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def upload(base_url: str, key: str, workspace: str, docs: list[tuple[str, str]], timeout: float) -> None:
    """Upload the documents (once: identical text is deduplicated) and wait until all are ready."""
    path = f"/api/v1/workspaces/{workspace}/resources/"
    ids = []
    started = time.perf_counter()
    for title, text in docs:
        status, body, _ = request(base_url, "POST", path, {"title": title, "text": text}, key)
        assert status in (200, 202), body
        ids.append(body["data"]["id"])
    deadline = time.monotonic() + timeout
    waiting = set(ids)
    while waiting:
        for resource_id in list(waiting):
            _, body, _ = request(base_url, "GET", f"{path}{resource_id}/", key=key)
            state = body["data"]["status"]
            if state == "failed":
                raise SystemExit(f"resource {resource_id} failed: {body['data']}")
            if state == "ready":
                waiting.discard(resource_id)
        if waiting:
            if time.monotonic() > deadline:
                raise SystemExit(f"{len(waiting)} resources not ready after {timeout:.0f} s")
            time.sleep(1)
    print(f"{len(ids)} documents uploaded and ready in {time.perf_counter() - started:.0f} s", flush=True)


def run(
    base_url: str, key: str, workspace: str, questions: list[str], *, turns: int, concurrency: int
) -> tuple[list[float], dict[str, list[float]], float]:
    """``turns`` chat turns over ``concurrency`` clients: per-turn ms, Server-Timing phases, wall time."""
    path = f"/api/v1/workspaces/{workspace}/chat/"
    per_client = turns // concurrency
    latencies: list[float] = []
    phases: dict[str, list[float]] = defaultdict(list)
    lock = threading.Lock()
    parts = urlsplit(base_url)
    TURN_PHASES.clear()

    def client_loop(client_index: int) -> None:
        conn = http.client.HTTPConnection(_host(parts.hostname, base_url), parts.port, timeout=120)
        session_id = None
        try:
            for n in range(per_client):
                body: dict[str, Any] = {
                    "external_user_id": f"bench-{concurrency}-{client_index}",
                    "message": questions[(client_index * per_client + n) % len(questions)],
                }
                if session_id and n % 25:  # a new session every 25 turns
                    body["session_id"] = session_id
                started = time.perf_counter()
                status, payload, timing = request(base_url, "POST", path, body, key, conn)
                elapsed = (time.perf_counter() - started) * 1000
                assert status == 200, payload
                session_id = payload["data"]["session"]["id"]
                with lock:
                    latencies.append(elapsed)
                    turn = {name: float(ms) for name, ms in re.findall(r"(\w+);dur=([0-9.]+)", timing)}
                    for name, ms in turn.items():
                        phases[name].append(ms)
                    TURN_PHASES.append((elapsed, turn))
        finally:
            conn.close()

    threads = [threading.Thread(target=client_loop, args=(i,)) for i in range(concurrency)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, phases, time.perf_counter() - started


def bench_local(runs: int, max_tokens: int) -> None:
    import torch

    from chat.backends import local_model_path
    from chat.backends.local import LocalBackend
    from chat.output import output_schema
    from chat.prompting import build_messages

    print(f"\nlocal backend: torch threads {torch.get_num_threads()}, load average {os.getloadavg()[0]:.1f}")
    backend = LocalBackend("smollm2-135m-instruct", model_path=local_model_path(), timeout=600)
    started = time.perf_counter()
    backend.load()
    print(f"  model loaded in {time.perf_counter() - started:.1f}s")
    messages = build_messages(
        workspace_prompt="",
        history=[],
        question="What is the capital of France?",
        passages=[],
        grounded=False,
    )
    schema = output_schema()
    rates = []
    for _ in range(runs):
        first_at = None
        started = time.perf_counter()
        final = None
        for item in backend.stream(messages, schema=schema, max_tokens=max_tokens):
            if isinstance(item, str) and first_at is None:
                first_at = time.perf_counter()
            elif not isinstance(item, str):
                final = item
        ended = time.perf_counter()
        assert final is not None and first_at is not None
        tokens = (final.completion_tokens or 1) - 1
        rate = tokens / (ended - first_at) if ended > first_at else 0.0
        rates.append(rate)
        if len(rates) == 1:
            print(f"  first reply: {final.text[:160]}")
        print(
            f"  prompt {final.prompt_tokens} tok, first token after {first_at - started:.2f}s, "
            f"{final.completion_tokens} tok in {ended - started:.2f}s -> decode {rate:.1f} tok/s"
        )
    print(f"  decode tokens/s: median {statistics.median(rates):.1f}")


# Each turn of the last level: (ms seen by the client, its Server-Timing phases).
TURN_PHASES: list[tuple[float, dict[str, float]]] = []


def breakdown() -> None:
    """Where a turn's server time went: each phase's mean per turn over all
    turns and over the slowest 5 % (what makes the tail)."""
    if not TURN_PHASES or not any(turn for _, turn in TURN_PHASES):
        return
    ordered = sorted(TURN_PHASES, key=lambda item: item[0])
    tail = ordered[-max(1, len(ordered) // 20) :]
    names = list(dict.fromkeys(name for _, turn in ordered for name in turn))

    def mean(rows: list[tuple[float, dict[str, float]]], name: str) -> float:
        return sum(turn.get(name, 0.0) for _, turn in rows) / len(rows)

    print(
        "    phases, mean ms per turn (all / slowest 5 %): "
        + "; ".join(f"{name} {mean(ordered, name):.1f} / {mean(tail, name):.1f}" for name in names),
        flush=True,
    )


def rounds_summary(levels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per concurrency level over the rounds: the median, lowest and highest
    p50 and p95 (printed, and returned for the JSON file)."""
    summary = []
    print("\nover the rounds, median (lowest-highest):")
    for concurrency in dict.fromkeys(entry["concurrency"] for entry in levels):
        rows = [entry for entry in levels if entry["concurrency"] == concurrency]
        figures: dict[str, Any] = {"concurrency": concurrency, "rounds": len(rows)}
        for name in ("p50_ms", "p95_ms"):
            values = sorted(float(row[name]) for row in rows)
            figures[name] = round(statistics.median(values), 1)
            figures[f"{name[:3]}_range_ms"] = [values[0], values[-1]]
        print(
            f"  concurrency {concurrency}: p50 {figures['p50_ms']} ms "
            f"({figures['p50_range_ms'][0]}-{figures['p50_range_ms'][1]}), "
            f"p95 {figures['p95_ms']} ms ({figures['p95_range_ms'][0]}-{figures['p95_range_ms'][1]})"
        )
        summary.append(figures)
    return summary


def report(
    label: str, latencies: list[float], phases: dict[str, list[float]], wall: float
) -> dict[str, float]:
    """Print one level's figures; return them for the JSON file."""
    figures = {
        "p50_ms": round(percentile(latencies, 50), 1),
        "p95_ms": round(percentile(latencies, 95), 1),
        "max_ms": round(max(latencies), 1),
        "turns_per_s": round(len(latencies) / wall, 1),
    }
    print(
        f"  {label}: p50 {percentile(latencies, 50):.1f} ms, p95 {percentile(latencies, 95):.1f} ms, "
        f"max {max(latencies):.1f} ms, throughput {len(latencies) / wall:.1f} turns/s",
        flush=True,
    )
    if phases.get("embed") and len(phases["embed"]) == len(latencies):
        embed, search_ms, app = phases["embed"], phases.get("search", []), phases.get("app", [])
        share = sum(embed) / sum(latencies)
        print(
            f"    server side: app p50 {percentile(app, 50):.1f} / p95 {percentile(app, 95):.1f} ms; "
            f"query embedding p50 {percentile(embed, 50):.1f} / p95 {percentile(embed, 95):.1f} ms "
            f"({share:.0%} of turn time); search p50 {percentile(search_ms, 50):.1f} / "
            f"p95 {percentile(search_ms, 95):.1f} ms",
            flush=True,
        )
        figures.update(
            embed_p50_ms=round(percentile(embed, 50), 1),
            embed_p95_ms=round(percentile(embed, 95), 1),
            search_p50_ms=round(percentile(search_ms, 50), 1),
            search_p95_ms=round(percentile(search_ms, 95), 1),
        )
    breakdown()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=200, help="turns per concurrency level")
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--base-url", help="a running service (default: start one)")
    parser.add_argument("--api-key", help="an admin key of the running service (with --base-url)")
    parser.add_argument("--workspace", help="a workspace id of the running service (with --base-url)")
    parser.add_argument(
        "--stand-in-port",
        type=int,
        default=0,
        help="port of the generation stand-in (with --base-url, start the service with "
        f"GENERATION_BACKEND=openai OPENAI_BASE_URL=http://127.0.0.1:PORT/v1 OPENAI_MODEL={STAND_IN_MODEL})",
    )
    parser.add_argument(
        "--unit-vectors",
        choices=("stored", "absent"),
        default="stored",
        help="stored (default): the answer units' vectors are made before the turns (as the worker's "
        "sweep does after ingestion); absent: never, so each process embeds the units during turns "
        "(the path before they were stored). Each has its own data directory under .data/bench/",
    )
    parser.add_argument(
        "--levels",
        type=lambda text: [int(level) for level in text.split(",")],
        default=[1, 8],
        help="concurrency levels, comma-separated (default 1,8)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure every level this many times and print the median and range of each figure "
        "(this machine's speed drifts from run to run)",
    )
    parser.add_argument("--skip-local", action="store_true", help="skip the local backend's tokens/s")
    parser.add_argument("--only-local", action="store_true", help="only the local backend's tokens/s")
    parser.add_argument("--local-runs", type=int, default=3)
    parser.add_argument("--local-max-tokens", type=int, default=64)
    parser.add_argument(
        "--no-json", action="store_true", help="do not write bench/results/chat_overhead.json"
    )
    args = parser.parse_args()

    if args.only_local:
        bench_local(args.local_runs, args.local_max_tokens)
        return
    stand_in = ThreadingHTTPServer(("127.0.0.1", args.stand_in_port or free_port()), StandIn)
    stand_in.daemon_threads = True
    threading.Thread(target=stand_in.serve_forever, daemon=True).start()
    stand_in_url = f"http://127.0.0.1:{stand_in.server_address[1]}/v1"
    service = None
    try:
        if args.base_url:
            if not (args.api_key and args.workspace):
                parser.error("--base-url needs --api-key and --workspace")
            base_url, key, workspace = args.base_url.rstrip("/"), args.api_key, args.workspace
            print(f"generation stand-in at {stand_in_url}", flush=True)
        else:
            started = time.perf_counter()
            data_dir = (
                SERVICE_DATA
                if args.unit_vectors == "stored"
                else SERVICE_DATA.with_name("chat-service-absent")
            )
            service = Service(stand_in_url, data_dir)
            state = service.wait_ready()
            base_url, key, workspace = service.base_url, state["api_key"], state["workspace_id"]
            print(f"service started at {base_url} in {time.perf_counter() - started:.0f} s", flush=True)
        print(
            f"host: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; embedding backend "
            f"{os.environ.get('EMBEDDING_BACKEND', 'onnx')} "
            f"{os.environ.get('EMBEDDING_ONNX_PRECISION', 'int8')}",
            flush=True,
        )
        upload(base_url, key, workspace, load_corpus(args.docs), timeout=1800)
        if service is not None and args.unit_vectors == "stored":
            service.embed_units()
        print(f"answer units' vectors: {args.unit_vectors}", flush=True)
        questions = load_questions()
        run(base_url, key, workspace, questions, turns=16, concurrency=1)  # warm-up
        STAND_IN_MS.clear()
        print(f"\nper-turn time through the service, generation stand-in ({args.turns} turns each):")
        levels = []
        for round_number in range(1, args.rounds + 1):
            if args.rounds > 1:
                print(f" round {round_number} of {args.rounds}")
            for concurrency in args.levels:
                load_before = os.getloadavg()
                latencies, phases, wall = run(
                    base_url, key, workspace, questions, turns=args.turns, concurrency=concurrency
                )
                figures = report(f"concurrency {concurrency}", latencies, phases, wall)
                # The higher of the load averages (1, 5, 15 min) at the level's start and end.
                load_avg = [round(max(a, b), 2) for a, b in zip(load_before, os.getloadavg(), strict=True)]
                entry = {"concurrency": concurrency, **figures, "load_avg": load_avg}
                levels.append({**entry, "round": round_number} if args.rounds > 1 else entry)
        spread = rounds_summary(levels) if args.rounds > 1 else []
        if not args.no_json:
            results = ROOT / "bench" / "results"
            results.mkdir(exist_ok=True)
            measured = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            body = {
                "turns": args.turns,
                "docs": args.docs,
                "unit_vectors": args.unit_vectors,
                "measured_at": measured,
                "levels": levels,
            }
            if spread:
                body["rounds"] = args.rounds
                body["summary"] = spread
            (results / "chat_overhead.json").write_text(json.dumps(body, indent=2) + "\n")
        if STAND_IN_MS:
            print(
                f"  generation stand-in's own handling: p50 {statistics.median(STAND_IN_MS):.2f} ms "
                f"over {len(STAND_IN_MS)} completions"
            )
        print(f"  (load average {os.getloadavg()[0]:.1f} at end)")
    finally:
        if service is not None:
            service.stop()
        stand_in.shutdown()
    if not args.skip_local:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "daneshyar.settings")
        import django

        django.setup()
        bench_local(args.local_runs, args.local_max_tokens)


if __name__ == "__main__":
    main()
