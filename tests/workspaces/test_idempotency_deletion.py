"""Idempotency-Key records never outlive the data they would replay: deleting
an end user, a session, or sessions by retention deletes the records that
hold their questions, answers and feedback; the same key then runs as a new
request. The scripted backend stands in for the generative model."""

from __future__ import annotations

import datetime as dt
import importlib
import json
import uuid
from typing import Any

import pytest
from django.utils import timezone

from chat.backends.scripted import ScriptedBackend
from chat.models import Message, Session
from chat.transcripts.retention import sessions_expired_delete
from daneshyar.exceptions import LLMUnavailable
from tests.chat.helpers import sse_events, stream_of
from tests.conftest import Tenant
from workspaces.models import IdempotencyRecord

pytestmark = pytest.mark.django_db

CARD = "My card is 4111 1111 1111 1111, why was it charged twice?"


def url(tenant: Tenant, path: str) -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/{path}"


def post(tenant: Tenant, path: str, body: dict[str, Any], key: str, scope: str = "chat") -> Any:
    return tenant.client(scope).post(url(tenant, path), body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def reply(text: str) -> str:
    return json.dumps({"type": "answer", "parts": [{"text": text, "passage": None}]})


def assert_new_turn(response: Any, deleted_question_id: str) -> None:
    """Answered as a new request: not a replay, a new question, nothing of the old one."""
    assert response.status_code == 200
    assert "Idempotent-Replayed" not in response
    assert response.json()["data"]["user_message"]["id"] != deleted_question_id
    assert Message.objects.filter(id=deleted_question_id).count() == 0


def test_deleting_the_end_user_deletes_what_a_replay_would_show(
    owner: Tenant, scripted: ScriptedBackend, outsider: Tenant
) -> None:
    scripted.replies = [reply("A double charge is refunded within 5 days.")]
    body = {"external_user_id": "alice", "message": CARD}
    first = post(owner, "chat/", body, "turn-1")
    assert first.status_code == 200
    # An unrelated end user's record, and another organization's, stay.
    post(owner, "chat/", {"external_user_id": "bob", "message": "Hi"}, "turn-b")
    post(outsider, "chat/", {"external_user_id": "alice", "message": "Hi"}, "turn-1")
    assert owner.client().delete(url(owner, "end-users/alice/")).status_code == 204
    assert IdempotencyRecord.objects.count() == 2
    scripted.replies = [reply("Fresh answer.")]
    again = post(owner, "chat/", body, "turn-1")
    assert_new_turn(again, first.json()["data"]["user_message"]["id"])
    assert "5 days" not in again.content.decode()
    assert post(owner, "chat/", {"external_user_id": "bob", "message": "Hi"}, "turn-b")["Idempotent-Replayed"]


def test_deleting_a_session_deletes_its_records(owner: Tenant, scripted: ScriptedBackend) -> None:
    scripted.replies = [reply("Refunded.")]
    body = {"external_user_id": "alice", "message": CARD}
    first = post(owner, "chat/", body, "turn-1").json()["data"]
    session = first["session"]["id"]
    feedback_path = f"sessions/{session}/messages/{first['assistant_message']['id']}/feedback/"
    feedback = {"external_user_id": "alice", "rating": "down", "comment": "My IBAN is DE89 3704 0044"}
    assert post(owner, feedback_path, feedback, "fb-1").status_code == 201
    keep = post(owner, "chat/", {"external_user_id": "alice", "message": "Other"}, "turn-2")
    assert IdempotencyRecord.objects.filter(session_id=session).count() == 2
    deleted = owner.client("chat").delete(url(owner, f"sessions/{session}/?external_user_id=alice"))
    assert deleted.status_code == 204
    assert not IdempotencyRecord.objects.filter(session_id=session).exists()
    assert_new_turn(post(owner, "chat/", body, "turn-1"), first["user_message"]["id"])
    # The feedback's key is free again; its message is gone, so the retry is a 404.
    assert post(owner, feedback_path, feedback, "fb-1").status_code == 404
    assert keep.status_code == 200
    assert post(owner, "chat/", {"external_user_id": "alice", "message": "Other"}, "turn-2")[
        "Idempotent-Replayed"
    ]


@pytest.mark.django_db(transaction=True)
def test_the_streamed_and_openai_turns_are_deleted_with_their_end_user(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    body = {"external_user_id": "alice", "message": CARD}
    events = list(sse_events(stream_of(post(owner, "chat/stream/", body, "s-1"))))
    assert events[-1][0] == "message"
    completion = {"model": "extractive", "messages": [{"role": "user", "content": CARD}], "user": "alice"}
    assert post(owner, "openai/v1/chat/completions", completion, "o-1").status_code == 200
    assert IdempotencyRecord.objects.filter(external_user_id="alice").count() == 2
    assert owner.client().delete(url(owner, "end-users/alice/")).status_code == 204
    assert not IdempotencyRecord.objects.exists()
    again = post(owner, "openai/v1/chat/completions", completion, "o-1")
    assert again.status_code == 200 and "Idempotent-Replayed" not in again


def test_a_resumable_turn_is_deleted_with_its_end_user(owner: Tenant, scripted: ScriptedBackend) -> None:
    """A turn that failed after storing its question keeps a record to resume
    it; deleting the end user deletes that record too, and the retry is new."""
    owner.workspace.on_generation_unavailable = "error"
    owner.workspace.save()
    scripted.replies = [LLMUnavailable()]
    body = {"external_user_id": "alice", "message": CARD}
    assert post(owner, "chat/", body, "flaky").status_code == 503
    assert IdempotencyRecord.objects.get().state == "resumable"
    owner.client().delete(url(owner, "end-users/alice/"))
    assert not IdempotencyRecord.objects.exists()
    scripted.replies = [reply("Now it works.")]
    retried = post(owner, "chat/", body, "flaky")
    assert retried.status_code == 200
    assert retried.json()["data"]["session"]["created"] is True


def test_retention_deletes_the_records_of_the_sessions_it_deletes(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    owner.workspace.retention_days = 30
    owner.workspace.save()
    old = post(owner, "chat/", {"external_user_id": "alice", "message": CARD}, "old").json()["data"]
    post(owner, "chat/", {"external_user_id": "bob", "message": "Hi"}, "new")
    Session.objects.filter(id=old["session"]["id"]).update(updated_at=timezone.now() - dt.timedelta(days=31))
    assert sessions_expired_delete() == 1
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["new"]


def test_records_of_a_deleted_workspace_go_with_it(owner: Tenant, scripted: ScriptedBackend) -> None:
    post(owner, "chat/", {"external_user_id": "alice", "message": CARD}, "turn-1")
    assert IdempotencyRecord.objects.get().workspace_id == owner.workspace.id
    assert owner.client().delete(url(owner, "")).status_code == 204
    assert not IdempotencyRecord.objects.exists()


def test_the_migration_finds_the_session_of_records_stored_before_it() -> None:
    """Records stored before they named their session (0007_idempotency_owner):
    the session comes from the stored body, in each shape a replay holds."""
    migration = importlib.import_module("workspaces.migrations.0007_idempotency_owner")
    session = uuid.uuid4()
    shapes: list[tuple[Any, Any]] = [
        ({"status": "ok", "data": {"session": {"id": str(session)}, "user_message": {}}}, None),  # chat
        ({"session": {"id": str(session)}, "assistant_message": {}}, None),  # chat stream
        ({"id": "chatcmpl-1", "daneshyar": {"session_id": str(session)}}, None),  # OpenAI
        ({"status": "ok", "data": {"session_id": str(session), "rating": "up"}}, None),  # feedback
        (None, {"session_id": str(session), "question_id": str(uuid.uuid4())}),  # resumable
    ]
    for body, resume in shapes:
        assert migration._session_of(body, resume) == session
    assert migration._session_of({"status": "ok", "data": {"id": "x", "name": "Claims"}}, None) is None
    assert migration._session_of(None, None) is None
