#!/usr/bin/env python3
"""What an end-user token costs per request, beside an API key.

Usage (from the repository root):
  .venv/bin/python bench/end_user_tokens.py [--requests 500]

What runs, on its own database ``daneshyar_bench_end_user_tokens`` of the
configured server (embedded by default), in one process: verifying a token
alone (decrypting the signing secret, the workspace lookup, the HS256
check) beside authenticating a key alone (its hash lookup); then whole
requests through Django's test client — ``GET …/sessions/`` of an end user
with no sessions, with ``X-API-Key`` and with ``Authorization: Bearer
<token>``, and the same with an ``Origin`` of the workspace's
``allowed_origins`` (the CORS decision adds a query). Rate limits are off,
so their Redis round trips do not blur the figures.

Printed: the median and 95th percentile per call, in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import _django  # noqa: E402


def timed(label: str, runs: int, call: Callable[[], object]) -> None:
    for _ in range(min(runs, 20)):  # warm up: connections, caches, imports
        call()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    p95 = samples[int(len(samples) * 0.95) - 1]
    print(f"{label:<44} median {statistics.median(samples):6.3f} ms   p95 {p95:6.3f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=500)
    args = parser.parse_args()

    _django.setup("end_user_tokens")
    from django.conf import settings
    from django.test.utils import setup_test_environment
    from rest_framework.test import APIClient

    from workspaces import services, tokens
    from workspaces.authentication import key_authenticate
    from workspaces.models import ApiKeyScope

    setup_test_environment()
    settings.RATE_LIMIT_ENABLED = False
    organization = services.organization_create(name="Bench tokens")
    try:
        workspace = services.workspace_create(
            organization=organization, name="Bench", allowed_origins=["https://shop.example"]
        )
        key = services.api_key_create(organization=organization, name="bench", scope=ApiKeyScope.CHAT)
        token = tokens.end_user_token_mint(workspace=workspace, external_user_id="alice").token
        runs = args.requests

        timed("verify an end-user token", runs, lambda: tokens.end_user_token_verify(token))
        timed("authenticate an API key", runs, lambda: key_authenticate(key.plaintext))

        url = f"/api/v1/workspaces/{workspace.id}/sessions/"
        with_key, with_token = APIClient(), APIClient()
        with_key.credentials(HTTP_X_API_KEY=key.plaintext)
        with_token.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        timed("GET sessions, X-API-Key", runs, lambda: with_key.get(url, {"external_user_id": "alice"}))
        timed("GET sessions, end-user token", runs, lambda: with_token.get(url))
        timed(
            "GET sessions, end-user token + Origin (CORS)",
            runs,
            lambda: with_token.get(url, HTTP_ORIGIN="https://shop.example"),
        )
    finally:
        organization.delete()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
