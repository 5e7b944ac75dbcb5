"""The chat stream read by real HTTP clients (curl, httpx) from a real
gunicorn process (tests/live_server.py), the way EventSource-style clients,
httpx-sse and fetch-event-source read it: any Accept header, event order,
heartbeat comments while the model is silent, and a turn that is stored even
when the client goes away mid-stream."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import requests

from chat.models import Message, Session
from tests.conftest import Tenant

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def server(live_server_scripted: str, transactional_db: None) -> str:
    """The scripted server: the model takes 1.5 s to its first token."""
    return live_server_scripted


def _url(base: str, tenant: Tenant) -> str:
    return f"{base}/api/v1/workspaces/{tenant.workspace.id}/chat/stream/"


def _body(**extra: Any) -> dict[str, Any]:
    return {"external_user_id": "u1", "message": "Tell me", **extra}


def _lines(response: httpx.Response) -> Iterator[str]:
    yield from response.iter_lines()


def test_curl_streams_with_accept_event_stream(server: str, owner: Tenant) -> None:
    curl = shutil.which("curl")
    assert curl, "curl is needed for this test (apt-get install curl)"
    result = subprocess.run(
        [
            curl,
            "-sN",
            "-H",
            "Accept: text/event-stream",
            "-H",
            f"X-API-Key: {owner.chat_key}",
            "-H",
            "Content-Type: application/json",
            "-d",
            json.dumps(_body()),
            _url(server, owner),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    events = [line[7:] for line in result.stdout.splitlines() if line.startswith("event: ")]
    assert events[0] == "session" and events[-1] == "message"
    assert set(events[1:-1]) == {"delta"}


@pytest.mark.parametrize("accept", ["text/event-stream", "*/*", "application/json", None])
def test_every_accept_header_gets_the_stream(server: str, owner: Tenant, accept: str | None) -> None:
    headers = {"X-API-Key": owner.chat_key}
    if accept is not None:
        headers["Accept"] = accept
    with httpx.stream("POST", _url(server, owner), json=_body(), headers=headers, timeout=60) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
        assert response.headers["cache-control"] == "no-cache"
        assert response.headers["x-accel-buffering"] == "no"
        body = "\n".join(_lines(response))
    assert "event: message" in body


def test_events_in_order_with_heartbeats_while_the_model_is_silent(server: str, owner: Tenant) -> None:
    headers = {"X-API-Key": owner.chat_key, "Accept": "text/event-stream"}
    seen: list[str] = []
    with httpx.stream("POST", _url(server, owner), json=_body(), headers=headers, timeout=60) as response:
        for line in _lines(response):
            if line.startswith(":"):
                seen.append("heartbeat")
            elif line.startswith("event: "):
                seen.append(line[7:])
    first_delta = seen.index("delta")
    assert seen[0] == "session"
    # 1.5 s to the first token with a 0.3 s heartbeat: comments in between.
    assert seen[1:first_delta].count("heartbeat") >= 2
    assert seen[-1] == "message"
    assert "error" not in seen


def test_a_client_that_disconnects_mid_stream_still_gets_its_turn_stored(server: str, owner: Tenant) -> None:
    headers = {"X-API-Key": owner.chat_key, "Accept": "text/event-stream"}
    with httpx.stream("POST", _url(server, owner), json=_body(), headers=headers, timeout=60) as response:
        lines = _lines(response)
        assert next(lines) == "event: session"
        session_id = json.loads(next(lines)[6:])["id"]
    # The connection is closed while the model has not produced a token yet.
    deadline = time.monotonic() + 30
    while not Message.objects.filter(session_id=session_id, role="assistant").exists():
        assert time.monotonic() < deadline, "the turn was not stored"
        time.sleep(0.1)
    reply = Message.objects.get(session_id=session_id, role="assistant")
    assert reply.content == "A streamed answer in several chunks."
    assert Session.objects.get(id=session_id).message_count == 2


def test_errors_before_the_stream_opens_are_json_whatever_the_accept(server: str, owner: Tenant) -> None:
    headers = {"X-API-Key": "dk_live_" + "x" * 40, "Accept": "text/event-stream"}
    response = httpx.post(_url(server, owner), json=_body(), headers=headers, timeout=30)
    assert response.status_code == 401
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["error"]["code"] == "unauthenticated"
    bad = httpx.post(
        _url(server, owner),
        json={"external_user_id": "u1"},
        headers={"X-API-Key": owner.chat_key, "Accept": "text/event-stream"},
        timeout=30,
    )
    assert bad.status_code == 400 and bad.json()["error"]["fields"]["message"]


def test_requests_reads_a_german_stream_with_its_default_decoding(server: str, owner: Tenant) -> None:
    """The docs' Python examples read the stream with ``requests``'
    ``iter_lines(decode_unicode=True)``: without a charset in the
    Content-Type, requests decodes text/* as Latin-1 ("zurÃ¼ck")."""
    question = "Wie setze ich das Gerät zurück?"
    headers = {"X-API-Key": owner.chat_key}
    with requests.post(
        _url(server, owner), json=_body(message=question), headers=headers, stream=True, timeout=60
    ) as response:
        assert response.status_code == 200
        lines = list(response.iter_lines(decode_unicode=True))
    session = json.loads(lines[lines.index("event: session") + 1][6:])
    assert session["title"] == question
