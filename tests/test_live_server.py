"""The live test server (tests/live.py) keeps answering however much it logs."""

from __future__ import annotations

import httpx
import pytest

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_the_server_answers_after_logging_more_than_a_pipe_holds(live_server_real: str, db: None) -> None:
    """Found by schema fuzzing: the server's stderr was a pipe nobody read;
    after about 64 KiB of "Not Found: /…" warnings every request hung."""
    with httpx.Client(base_url=live_server_real, timeout=10) as client:
        for _ in range(60):  # ~2 KiB logged per request: ~120 KiB
            assert client.get("/api/v1/" + "x" * 2000).status_code == 404
        assert client.get("/healthz").status_code == 200
