"""Resuming a turn that failed after storing its question: what the
Idempotency-Key's record keeps between the two requests is a typed value
(``TurnResume``), stored as JSON, and records written before it was typed
still resume. The scripted backend stands in for the generative model (and
for its failure)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from chat.backends.scripted import ScriptedBackend
from chat.models import Message
from chat.services.turn import TurnResume
from daneshyar.exceptions import LLMUnavailable
from tests.conftest import Tenant
from workspaces.models import IdempotencyRecord

SESSION = uuid.UUID("6f1c2a52-59a4-4c55-9d8e-0d6c1f0b6a10")
QUESTION = uuid.UUID("2b0e4c8e-8f3e-4d8b-a1c4-54f7f0f0d9a2")


def test_a_resume_point_round_trips_through_its_json() -> None:
    resume = TurnResume(session_id=SESSION, question_id=QUESTION, session_created=True)
    assert resume.as_json() == {"session_id": str(SESSION), "question_id": str(QUESTION), "created": True}
    assert TurnResume.from_json(resume.as_json()) == resume


@pytest.mark.parametrize(("stored", "created"), [("1", True), ("0", False), (True, True), (False, False)])
def test_the_earlier_string_flags_are_read_too(stored: object, created: bool) -> None:
    data = {"session_id": str(SESSION), "question_id": str(QUESTION), "created": stored}
    resume = TurnResume.from_json(data)
    assert resume is not None and resume.session_created is created


def test_a_record_without_a_stored_question_resumes_nothing() -> None:
    assert TurnResume.from_json(None) is None


def _chat(tenant: Tenant, key: str) -> Any:
    return tenant.client("chat").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/chat/",
        {"external_user_id": "u1", "message": "Is it there?"},
        format="json",
        HTTP_IDEMPOTENCY_KEY=key,
    )


@pytest.mark.django_db
def test_a_record_stored_by_the_earlier_version_still_resumes(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    owner.workspace.on_generation_unavailable = "error"
    owner.workspace.save()
    scripted.replies = [LLMUnavailable()]
    failed = _chat(owner, "flaky")
    assert failed.status_code == 503
    record = IdempotencyRecord.objects.get()
    question = Message.objects.get(role="user")
    assert record.resume == {
        "session_id": str(question.session_id),
        "question_id": str(question.id),
        "created": True,
    }
    # As the key's record held it before the value was typed.
    IdempotencyRecord.objects.filter(pk=record.pk).update(
        resume={"session_id": str(question.session_id), "question_id": str(question.id), "created": "1"}
    )
    retried = _chat(owner, "flaky")
    assert retried.status_code == 200
    data = retried.json()["data"]
    assert data["session"]["created"] is True
    assert data["user_message"]["id"] == str(question.id)
    assert Message.objects.filter(role="user").count() == 1
