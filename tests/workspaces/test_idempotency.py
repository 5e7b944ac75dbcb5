"""Idempotency-Key on every creating POST. The scripted backend stands in
for the generative model (and for its failures)."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.http import StreamingHttpResponse
from django.utils import timezone

from chat.backends.scripted import ScriptedBackend
from chat.models import Feedback, Message, Session
from daneshyar.exceptions import LLMUnavailable
from resources.models import Resource
from tests.chat.helpers import sse_events, stream_of
from tests.conftest import Tenant
from workspaces.idempotency import idempotency_expired_delete
from workspaces.models import IdempotencyRecord, Workspace

pytestmark = pytest.mark.django_db


def post(tenant: Tenant, path: str, body: dict[str, Any], key: str | None, scope: str = "chat") -> Any:
    headers: dict[str, Any] = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    return tenant.client(scope).post(path, body, format="json", **headers)


def chat_url(tenant: Tenant, suffix: str = "chat/") -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/{suffix}"


def test_a_retried_chat_post_returns_the_same_messages_and_stores_one_question(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    body = {"external_user_id": "u1", "message": "When are claims filed?"}
    first = post(owner, chat_url(owner), body, "turn-1")
    again = post(
        owner, chat_url(owner), {"message": "When are claims filed?", "external_user_id": "u1"}, "turn-1"
    )
    assert first.status_code == again.status_code == 200
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert Message.objects.filter(role="user").count() == 1
    assert len(scripted.calls) == 1
    # Without the key, the same body is a new turn.
    assert (
        post(owner, chat_url(owner), body, None).json()["data"]["user_message"]["id"]
        != (first.json()["data"]["user_message"]["id"])
    )


def test_the_same_key_with_another_body_is_422(owner: Tenant, scripted: ScriptedBackend) -> None:
    post(owner, chat_url(owner), {"external_user_id": "u1", "message": "One"}, "k")
    reused = post(owner, chat_url(owner), {"external_user_id": "u1", "message": "Two"}, "k")
    assert reused.status_code == 422 and reused.json()["error"]["code"] == "idempotency_key_reused"
    # Keys belong to one API key: another key may use the same string.
    assert (
        post(owner, chat_url(owner), {"external_user_id": "u1", "message": "Two"}, "k", "admin").status_code
        == 200
    )


@pytest.mark.django_db(transaction=True)
def test_a_retry_while_the_first_is_running_is_409(owner: Tenant, scripted: ScriptedBackend) -> None:
    scripted.gate.clear()  # the first turn's stream waits here
    scripted.chunk_size = 2
    body = {"external_user_id": "u1", "message": "Slow?"}
    response = post(owner, chat_url(owner, "chat/stream/"), body, "slow")
    chunks = stream_of(response)
    next(chunks)  # the session event: the turn is running
    second = post(owner, chat_url(owner, "chat/stream/"), body, "slow")
    assert second.status_code == 409 and second.json()["error"]["code"] == "request_in_progress"
    scripted.gate.set()
    list(chunks)
    # Done: now the retry replays the stream.
    replay = post(owner, chat_url(owner, "chat/stream/"), body, "slow")
    events = list(sse_events(stream_of(replay)))
    assert [name for name, _ in events] == ["session", "delta", "message"]
    assert events[-1][1]["content"] == "Scripted answer."
    assert Message.objects.filter(role="user").count() == 1
    connection.close()


def test_a_retry_after_a_503_answers_the_stored_question(owner: Tenant, scripted: ScriptedBackend) -> None:
    owner.workspace.on_generation_unavailable = "error"
    owner.workspace.save()
    scripted.replies = [LLMUnavailable()]
    body = {"external_user_id": "u1", "message": "Is it there?"}
    failed = post(owner, chat_url(owner), body, "flaky")
    assert failed.status_code == 503
    session_id = failed.json()["error"]["session_id"]
    retried = post(owner, chat_url(owner), body, "flaky")
    assert retried.status_code == 200
    data = retried.json()["data"]
    assert data["session"] == {"id": session_id, "title": "Is it there?", "created": True}
    assert list(Message.objects.filter(session_id=session_id).values_list("sequence", "role")) == [
        (0, "user"),
        (1, "assistant"),
    ]
    assert Session.objects.count() == 1
    # And the answer is replayed from then on.
    assert post(owner, chat_url(owner), body, "flaky").json() == retried.json()


NATIVE = {"external_user_id": "u1", "message": "Is it there?"}
OPENAI = {
    "model": "smollm2-135m-instruct",
    "messages": [{"role": "user", "content": "Is it there?"}],
    "user": "u1",
}
# A stream's worker stores the turn on its own connection: those cases commit.
COMMITTED = pytest.mark.django_db(transaction=True)
ENTRANCES = [
    pytest.param("chat/", NATIVE, id="chat"),
    pytest.param("chat/stream/", NATIVE, id="stream", marks=COMMITTED),
    pytest.param("openai/v1/chat/completions", OPENAI, id="openai"),
    pytest.param(
        "openai/v1/chat/completions", {**OPENAI, "stream": True}, id="openai-stream", marks=COMMITTED
    ),
]


def _read(response: Any) -> Any:
    """A response with its body read (a stream's worker has stored the turn when it ends)."""
    if isinstance(response, StreamingHttpResponse):
        b"".join(stream_of(response))
    return response


@pytest.mark.parametrize(("path", "body"), ENTRANCES)
def test_every_entrance_resumes_a_failed_turn_from_its_stored_question(
    owner: Tenant, scripted: ScriptedBackend, path: str, body: dict[str, Any]
) -> None:
    owner.workspace.on_generation_unavailable = "error"
    owner.workspace.save()
    scripted.replies = [LLMUnavailable()]
    failed = _read(post(owner, chat_url(owner, path), body, "flaky"))
    assert failed.status_code in (200, 503)  # a stream reports the failure as an event
    record = IdempotencyRecord.objects.get()
    assert (record.state, record.status_code) == ("resumable", 503)
    scripted.replies = [json.dumps({"type": "answer", "parts": [{"text": "Now it works.", "passage": None}]})]
    retried = _read(post(owner, chat_url(owner, path), body, "flaky"))
    assert retried.status_code == 200 and "Idempotent-Replayed" not in retried
    assert Session.objects.count() == 1
    assert list(Message.objects.order_by("sequence").values_list("role", "content")) == [
        ("user", "Is it there?"),
        ("assistant", "Now it works."),
    ]
    assert IdempotencyRecord.objects.get().state == "done"
    # And the answer is replayed from then on.
    assert _read(post(owner, chat_url(owner, path), body, "flaky")).status_code == 200
    assert Message.objects.count() == 2


def test_a_request_refused_before_it_ran_stores_nothing(owner: Tenant, scripted: ScriptedBackend) -> None:
    bad = post(owner, chat_url(owner), {"external_user_id": "u1"}, "fixme")
    assert bad.status_code == 400
    assert not IdempotencyRecord.objects.exists()
    fixed = post(owner, chat_url(owner), {"external_user_id": "u1", "message": "Now?"}, "fixme")
    assert fixed.status_code == 200


def test_uploads_workspaces_and_feedback_replay(owner: Tenant, scripted: ScriptedBackend) -> None:
    resources = f"/api/v1/workspaces/{owner.workspace.id}/resources/"
    first = post(owner, resources, {"title": "Doc", "text": "Claims are filed in 30 days."}, "up-1", "admin")
    again = post(owner, resources, {"title": "Doc", "text": "Claims are filed in 30 days."}, "up-1", "admin")
    assert first.status_code == again.status_code == 202 and again.json() == first.json()
    assert Resource.objects.count() == 1
    created = post(owner, "/api/v1/workspaces/", {"name": "Claims"}, "ws-1", "admin")
    replayed = post(owner, "/api/v1/workspaces/", {"name": "Claims"}, "ws-1", "admin")
    assert created.status_code == replayed.status_code == 201
    assert Workspace.objects.filter(name="Claims").count() == 1
    turn = post(owner, chat_url(owner), {"external_user_id": "u1", "message": "Hi"}, None).json()["data"]
    url = (
        f"/api/v1/workspaces/{owner.workspace.id}/sessions/{turn['session']['id']}/messages/"
        f"{turn['assistant_message']['id']}/feedback/"
    )
    body = {"external_user_id": "u1", "rating": "up"}
    assert post(owner, url, body, "fb").status_code == post(owner, url, body, "fb").status_code == 201
    assert Feedback.objects.count() == 1


def test_the_openai_endpoint_honours_the_key(owner: Tenant) -> None:
    url = f"/api/v1/workspaces/{owner.workspace.id}/openai/v1/chat/completions"
    body = {"model": "extractive", "messages": [{"role": "user", "content": "Hi"}], "user": "u1"}
    first = post(owner, url, body, "oa")
    again = post(owner, url, body, "oa")
    assert first.json()["id"] == again.json()["id"] and again["Idempotent-Replayed"] == "true"
    assert Message.objects.filter(role="user").count() == 1


def test_keys_are_validated_and_expire_after_a_day(owner: Tenant, scripted: ScriptedBackend) -> None:
    bad = post(owner, chat_url(owner), {"external_user_id": "u1", "message": "x"}, "k" * 256)
    assert bad.status_code == 400 and "Idempotency-Key" in bad.json()["error"]["fields"]
    post(owner, chat_url(owner), {"external_user_id": "u1", "message": "Old"}, "old")
    IdempotencyRecord.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    # An expired key is new again (and the sweep deletes the stale records).
    fresh = post(owner, chat_url(owner), {"external_user_id": "u1", "message": "New"}, "old")
    assert fresh.status_code == 200 and "Idempotent-Replayed" not in fresh
    IdempotencyRecord.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert idempotency_expired_delete() == 1


@pytest.mark.django_db(transaction=True)
def test_two_retries_racing_run_the_turn_once(owner: Tenant, scripted: ScriptedBackend) -> None:
    scripted.default = json.dumps({"type": "answer", "parts": [{"text": "Once.", "passage": None}]})
    body = {"external_user_id": "u1", "message": "Race?"}
    results: list[int] = []

    def send() -> None:
        try:
            results.append(post(owner, chat_url(owner), body, "race").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(results) <= {200, 409} and 200 in results
    assert Message.objects.filter(role="user").count() == 1
