"""Server-side time per chat turn, excluding generation; and local tokens/s.

    .venv/bin/python bench/chat_overhead.py [--turns 200] [--docs 100] [--skip-local]

What is timed: a whole ``POST /api/v1/workspaces/{id}/chat/`` through
Django's WSGI stack in-process (API-key authentication, validation, query
embedding, retrieval, prompt building with up to 20 history turns,
persistence of both messages, JSON rendering) with a zero-latency generation
double (``ScriptedBackend``), so generation contributes nothing. Each client
continues its own session, so the history grows as it would in real use.
Concurrency 8 runs 8 client threads against the same process.

The documents are the first ``--docs`` abstracts of SciFact
(``../shared/datasets/scifact``), one resource each, split into passages of
about 3 sentences; the questions are SciFact claims.

Then the local backend (SmolLM2-135M GGUF + xgrammar) generates a few
replies to a real prompt: tokens/s of decoding, prefill time apart.

Runs on a throw-away test database (created and dropped here).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "daneshyar.settings")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TEST_DATABASE_NAME", "bench_chat_overhead")
SCIFACT = ROOT.parent / "shared" / "datasets" / "scifact"

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

PHASES: dict[str, list[float]] = defaultdict(list)
_local = threading.local()


def timed(phase: str, func: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            _local.phases[phase] = _local.phases.get(phase, 0.0) + time.perf_counter() - started

    return wrapper


def instrument() -> None:
    """Wrap the phases of a turn to report where the time goes."""
    from chat import selectors
    from chat.services import turns
    from retrieval.embeddings import get_embedder
    from workspaces import authentication

    auth = authentication.ApiKeyAuthentication.authenticate
    authentication.ApiKeyAuthentication.authenticate = timed("auth", auth)  # type: ignore[method-assign]
    embedder = get_embedder()
    embed = embedder.embed_query
    embedder.embed_query = timed("embed query", embed)  # type: ignore[method-assign]
    turns.search = timed("retrieval (incl. embed)", turns.search)
    turns.question_store = timed("store question", turns.question_store)
    selectors.history_turns = timed("load history", selectors.history_turns)
    turns.build_messages = timed("build prompt", turns.build_messages)
    turns.release_connection = timed("close connection", turns.release_connection)
    turns.turn_generate = timed("generate (double)", turns.turn_generate)
    turns.turn_finish = timed("store reply", turns.turn_finish)


def load_corpus(count: int) -> list[tuple[str, str]]:
    docs = []
    with (SCIFACT / "corpus.jsonl").open() as handle:
        for line in handle:
            row = json.loads(line)
            sentences = [s.strip() for s in row["text"].split(". ") if s.strip()]
            paragraphs = [". ".join(sentences[i : i + 3]) for i in range(0, len(sentences), 3)]
            docs.append((row["title"][:400], "\n\n".join(paragraphs)))
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


def run(
    workspace_id: str, key: str, questions: list[str], *, turns: int, concurrency: int
) -> tuple[list[float], float]:
    """``turns`` chat turns over ``concurrency`` clients; per-turn ms and the wall time."""
    url = f"/api/v1/workspaces/{workspace_id}/chat/"
    per_client = turns // concurrency
    latencies: list[float] = []
    lock = threading.Lock()

    def client_loop(client_index: int) -> None:
        client = Client(headers={"X-API-Key": key})
        session_id = None
        _local.phases = {}
        try:
            for n in range(per_client):
                body: dict[str, Any] = {
                    "external_user_id": f"bench-{concurrency}-{client_index}",
                    "message": questions[(client_index * per_client + n) % len(questions)],
                }
                if session_id and n % 25:  # a new session every 25 turns
                    body["session_id"] = session_id
                started = time.perf_counter()
                response = client.post(url, body, content_type="application/json")
                elapsed = (time.perf_counter() - started) * 1000
                assert response.status_code == 200, response.content
                session_id = response.json()["data"]["session"]["id"]
                with lock:
                    latencies.append(elapsed)
                    for phase, seconds in _local.phases.items():
                        PHASES[f"{concurrency}:{phase}"].append(seconds * 1000)
                _local.phases = {}
        finally:
            connection.close()

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        list(pool.map(client_loop, range(concurrency)))
    return latencies, time.perf_counter() - started


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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--skip-local", action="store_true")
    parser.add_argument("--only-local", action="store_true", help="only the local backend's tokens/s")
    parser.add_argument("--local-runs", type=int, default=3)
    parser.add_argument("--local-max-tokens", type=int, default=64)
    args = parser.parse_args()

    from chat.backends import use_backend
    from chat.backends.scripted import ScriptedBackend
    from tests.chat.helpers import ingest_text
    from tests.conftest import make_tenant

    if args.only_local:
        bench_local(args.local_runs, args.local_max_tokens)
        return
    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        tenant = make_tenant("Bench")
        started = time.perf_counter()
        docs = load_corpus(args.docs)
        for title, text in docs:
            ingest_text(tenant.workspace, title, text)
        from retrieval.models import Passage

        passages = Passage.objects.count()
        print(f"ingested {len(docs)} resources / {passages} passages in {time.perf_counter() - started:.1f}s")
        instrument()
        questions = load_questions()
        with use_backend(ScriptedBackend()):
            run(str(tenant.workspace.id), tenant.chat_key, questions, turns=16, concurrency=1)  # warm-up
            PHASES.clear()
            print(f"\nper-turn server time, generation excluded ({args.turns} turns each):")
            print(f"  (host: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start)")
            for concurrency in (1, 8):
                latencies, wall = run(
                    str(tenant.workspace.id),
                    tenant.chat_key,
                    questions,
                    turns=args.turns,
                    concurrency=concurrency,
                )
                print(
                    f"  concurrency {concurrency}: p50 {percentile(latencies, 50):.1f} ms, "
                    f"p95 {percentile(latencies, 95):.1f} ms, max {max(latencies):.1f} ms, "
                    f"throughput {len(latencies) / wall:.1f} turns/s"
                )
            print(f"  (load average {os.getloadavg()[0]:.1f} at end)")
            print("\nphase medians at concurrency 1 (ms):")
            for name, values in PHASES.items():
                if name.startswith("1:"):
                    p50, p95 = statistics.median(values), percentile(values, 95)
                    print(f"  {name[2:]:<26} p50 {p50:6.2f}  p95 {p95:6.2f}")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    if not args.skip_local:
        bench_local(args.local_runs, args.local_max_tokens)


if __name__ == "__main__":
    main()
