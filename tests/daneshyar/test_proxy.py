"""The compose topology, nginx (deploy/nginx.conf) in front of gunicorn, under
hostile clients: issue 23, "Eight idle connections stall the web tier"."""

from __future__ import annotations

import json
import socket

import pytest

from tests.nginx import nginx_in_front
from tests.slow_clients import half_sent_requests, seconds_to_answer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_a_request_answers_at_once_past_200_half_sent_requests(live_server_real: str) -> None:
    with nginx_in_front(live_server_real.removeprefix("http://")) as port, half_sent_requests(
        "127.0.0.1", port, 200
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
