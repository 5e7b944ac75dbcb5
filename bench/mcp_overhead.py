#!/usr/bin/env python3
"""What the MCP server adds to a search: ``POST …/search/`` beside the
``search`` tool of ``…/mcp/``, the same queries, in one run.

Usage (from the repository root):

    .venv/bin/python bench/mcp_overhead.py [--tool search|answer] [--requests 200] [--docs 40]

What runs: on its own database ``daneshyar_bench_mcp_overhead`` of the
configured server (embedded PostgreSQL by default), one workspace with
``--docs`` short documents (ingested once, with the configured embedding
backend, and kept between runs), a new chat key each run, and a real
gunicorn process (tests/live_server.py: one gthread worker of 4 threads, as
the tests' live server) with rate limits off. Then, alternating query by
query (which goes first alternates too) so that drift hits both alike, each
with a query of its own (the service caches query embeddings: a repeated
query would favour the second):

* ``rest``: ``POST /api/v1/workspaces/{id}/search/`` (``--tool answer``:
  ``POST …/chat/``, a new session each time) with httpx (one keep-alive
  connection);
* ``mcp``: ``tools/call search`` (``answer``) through the official ``mcp``
  client, one client connected once (its ``server/discover`` not timed),
  each call one HTTP request.

The answers come from the configured generation backend (the extractive
engine by default): the overhead is the protocol's, whatever the model.

Printed: the median and 95th percentile per call in milliseconds, for each
and for the difference. Both do the same search (retrieval/search/); what
differs is the protocol: JSON-RPC framing, the SDK's transport and
dispatch, the event loop beside the request's thread.

Measured on two quiet cores (load average 0.5), 40 documents, the e5onnx
embedding backend, the extractive generation backend, 200 searches (150
answers) each way:

* search: ``rest`` p50 16.6 ms, p95 19.0 ms; ``mcp`` p50 19.9 ms, p95
  22.6 ms: the overhead 3.3 ms at p50 and 3.6 ms at p95 (the per-query
  difference: p50 3.3 ms, p95 5.3 ms).
* answer: ``rest`` p50 25.1 ms, p95 32.8 ms; ``mcp`` p50 27.3 ms, p95
  34.7 ms: 2.2 ms at p50, 1.9 ms at p95 (per query p50 2.4 ms, p95 10.3 ms:
  the turn's own spread, on both sides, more than the protocol).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import _django  # noqa: E402

TOPICS = [
    "claims",
    "refunds",
    "vacation",
    "travel",
    "security",
    "onboarding",
    "equipment",
    "parking",
    "training",
    "expenses",
]


def workspace_with_documents(docs: int) -> Any:
    from tests.chat.helpers import ingest_text
    from workspaces.models import Organization, Workspace

    organization, _ = Organization.objects.get_or_create(name="MCP overhead bench")
    workspace = Workspace.objects.filter(organization=organization).first()
    if workspace is None:
        workspace = Workspace.objects.create(organization=organization, name="Handbook")
    have = workspace.resources.count()
    for n in range(have, docs):
        topic = TOPICS[n % len(TOPICS)]
        text = (
            f"The {topic} policy, part {n}: requests about {topic} are filed within {n + 5} days.\n\n"
            f"Questions about {topic} go to the {topic} desk, open {n % 8 + 1} hours a day.\n\n"
            f"Exceptions to the {topic} rules need a manager's approval in writing."
        )
        ingest_text(workspace, f"{topic.title()} policy {n}", text)
    return workspace


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def report(label: str, samples: list[float]) -> None:
    print(
        f"{label:<12} p50 {statistics.median(samples):7.2f} ms   p95 {percentile(samples, 0.95):7.2f} ms"
        f"   (n={len(samples)})"
    )


async def measure(
    base: str, workspace_id: str, key: str, requests: int, tool: str
) -> tuple[list[float], list[float]]:
    import httpx
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    queries = [f"When are {TOPICS[i % len(TOPICS)]} requests filed? ({i})" for i in range(requests)]
    rest_url = f"{base}/api/v1/workspaces/{workspace_id}/{'search' if tool == 'search' else 'chat'}/"
    mcp_url = f"{base}/api/v1/workspaces/{workspace_id}/mcp/"
    rest: list[float] = []
    mcp: list[float] = []
    async with (
        httpx.AsyncClient(headers={"X-API-Key": key}, timeout=60) as http,
        httpx2.AsyncClient(headers={"X-API-Key": key}, timeout=60) as http2,
        Client(streamable_http_client(mcp_url, http_client=http2), cache=None) as client,
    ):

        def arguments(query: str) -> dict[str, Any]:
            if tool == "search":
                return {"query": query, "top_k": 5}
            return {"external_user_id": "bench", "message": query}

        for warm in queries[:10]:  # connections, the embedder, the plans
            (await http.post(rest_url, json=arguments(warm))).raise_for_status()
            await client.call_tool(tool, arguments(warm))
        for n, query in enumerate(queries):
            # Each its own query (the service caches query embeddings), and
            # which goes first alternates.
            for side in ("rest", "mcp") if n % 2 == 0 else ("mcp", "rest"):
                started = time.perf_counter()
                if side == "rest":
                    response = await http.post(rest_url, json=arguments(f"{query} [rest]"))
                    response.raise_for_status()
                else:
                    result = await client.call_tool(tool, arguments(f"{query} [mcp]"))
                    assert not result.is_error and result.structured_content, result
                (rest if side == "rest" else mcp).append((time.perf_counter() - started) * 1000)
    return rest, mcp


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tool", choices=("search", "answer"), default="search")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--docs", type=int, default=40)
    args = parser.parse_args()
    os.environ["RATE_LIMIT_ENABLED"] = "false"
    # Fresh secrets unless the environment has the deployment's; the server process inherits them.
    from daneshyar.keygen import new_secret

    for name in ("SECRET_KEY", "CERTIFICATE_SIGNING_KEY", "TRANSCRIPT_PSEUDONYM_KEY", "API_KEY_HASH_SECRET"):
        os.environ.setdefault(name, new_secret(name))
    _django.setup("mcp_overhead")
    import anyio

    from tests.live import live_server
    from workspaces import services
    from workspaces.models import ApiKeyScope

    workspace = workspace_with_documents(args.docs)
    key = services.api_key_create(organization=workspace.organization, name="bench", scope=ApiKeyScope.CHAT)
    print(
        f"{workspace.resources.count()} documents; {args.requests} calls of {args.tool} each way, alternating"
    )
    # The server process works on this database (live_server reads the connection's).
    with live_server(RATE_LIMIT_ENABLED="false") as base:
        rest, mcp = anyio.run(measure, base, str(workspace.id), key.plaintext, args.requests, args.tool)
    report("rest", rest)
    report("mcp", mcp)
    report("mcp - rest", [m - r for m, r in zip(mcp, rest, strict=True)])
    print(
        f"overhead     p50 {statistics.median(mcp) - statistics.median(rest):7.2f} ms"
        f"   p95 {percentile(mcp, 0.95) - percentile(rest, 0.95):7.2f} ms   (mcp's percentile less rest's)"
    )


if __name__ == "__main__":
    main()
