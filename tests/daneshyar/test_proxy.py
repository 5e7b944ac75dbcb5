"""The compose topology, nginx (deploy/nginx.conf) in front of gunicorn, under
hostile clients: issue 23, "Eight idle connections stall the web tier"."""

from __future__ import annotations

import json
import socket
import time

import httpx
import pytest

from tests.conftest import Tenant
from tests.nginx import nginx_in_front
from tests.slow_clients import half_sent_requests, seconds_to_answer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_a_request_answers_at_once_past_200_half_sent_requests(live_server_real: str) -> None:
    with (
        nginx_in_front(live_server_real.removeprefix("http://")) as port,
        half_sent_requests("127.0.0.1", port, 200),
    ):
        assert seconds_to_answer(f"http://127.0.0.1:{port}/healthz") < 1.0


def test_a_body_over_the_largest_upload_is_413_in_the_envelope(live_server_real: str) -> None:
    with (
        nginx_in_front(live_server_real.removeprefix("http://")) as port,
        socket.create_connection(("127.0.0.1", port), timeout=10) as sock,
    ):
        sock.sendall(
            b"POST /api/v1/workspaces/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 30000000\r\n\r\n"
        )
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413"), head
    assert json.loads(body)["error"]["code"] == "payload_too_large"


def test_a_stream_passes_through_as_it_comes(live_server_scripted: str, owner: Tenant) -> None:
    """The scripted model is silent for 1.5 s with a heartbeat every 0.3 s:
    through nginx the heartbeats still arrive before the answer."""
    headers = {"X-API-Key": owner.chat_key, "Accept": "text/event-stream"}
    body = {"external_user_id": "u1", "message": "Tell me"}
    with nginx_in_front(live_server_scripted.removeprefix("http://")) as port:
        url = f"http://127.0.0.1:{port}/api/v1/workspaces/{owner.workspace.id}/chat/stream/"
        started = time.monotonic()
        with httpx.stream("POST", url, json=body, headers=headers, timeout=60) as response:
            assert response.status_code == 200
            seen: list[tuple[float, str]] = [
                (time.monotonic() - started, line) for line in response.iter_lines() if line
            ]
    heartbeats = [at for at, line in seen if line.startswith(":")]
    answered = next(at for at, line in seen if line == "event: message")
    assert len(heartbeats) >= 2 and heartbeats[0] < answered - 0.5
