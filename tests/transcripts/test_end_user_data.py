from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from django.conf import settings
from django.utils import timezone

from chat.models import Feedback, Message, Session
from chat.tasks import delete_expired_sessions
from chat.transcripts import retention
from tests.conftest import Tenant
from tests.factories import WorkspaceFactory
from tests.transcripts.factories import conversation, feedback

pytestmark = pytest.mark.django_db


def _delete_url(tenant: Tenant, user: str) -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/end-users/{user}/"


def _feedback_url(workspace_id: uuid.UUID | str, session: Session, message: Message) -> str:
    return f"/api/v1/workspaces/{workspace_id}/sessions/{session.id}/messages/{message.id}/feedback/"


# --- End-user deletion ------------------------------------------------------


def test_end_user_deletion_removes_only_that_users_data_and_repeats_cleanly(
    owner: Tenant, outsider: Tenant
) -> None:
    alice_sessions = [conversation(owner.workspace, external_user_id="alice")[0] for _ in range(3)]
    _, alice_messages = conversation(owner.workspace, external_user_id="alice")
    feedback(alice_messages[1])
    bob, bob_messages = conversation(owner.workspace, external_user_id="bob")
    feedback(bob_messages[1])
    sibling = WorkspaceFactory.create(organization=owner.organization)
    alice_elsewhere, _ = conversation(sibling, external_user_id="alice")
    alice_foreign, _ = conversation(outsider.workspace, external_user_id="alice")

    for _ in range(2):
        response = owner.client().delete(_delete_url(owner, "alice"))
        assert response.status_code == 204
        assert response.content == b""

    assert not Session.objects.filter(workspace=owner.workspace, external_user_id="alice").exists()
    assert not Message.objects.filter(session__in=alice_sessions).exists()
    assert not Feedback.objects.filter(external_user_id="alice").exists()
    assert set(Session.objects.values_list("id", flat=True)) == {bob.id, alice_elsewhere.id, alice_foreign.id}
    assert Message.objects.filter(session=bob).count() == 2
    assert Feedback.objects.filter(external_user_id="bob").count() == 1


def test_end_user_deletion_of_unknown_user_is_204(owner: Tenant) -> None:
    assert owner.client().delete(_delete_url(owner, "nobody")).status_code == 204


def test_end_user_id_with_slash_and_unicode(owner: Tenant) -> None:
    conversation(owner.workspace, external_user_id="tenant/42/ü")
    response = owner.client().delete(_delete_url(owner, "tenant/42/%C3%BC"))
    assert response.status_code == 204
    assert not Session.objects.exists()


def test_end_user_deletion_in_small_batches(owner: Tenant) -> None:
    for _ in range(5):
        conversation(owner.workspace, external_user_id="alice")
    assert (
        retention.end_user_data_delete(workspace=owner.workspace, external_user_id="alice", batch_size=2) == 5
    )
    assert not Message.objects.exists()


def test_end_user_deletion_chat_key_gets_403(owner: Tenant) -> None:
    conversation(owner.workspace, external_user_id="alice")
    response = owner.client("chat").delete(_delete_url(owner, "alice"))
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"
    assert Session.objects.count() == 1


def test_end_user_deletion_outsider_gets_404(owner: Tenant, outsider: Tenant) -> None:
    conversation(owner.workspace, external_user_id="alice")
    response = outsider.client().delete(_delete_url(owner, "alice"))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert Session.objects.count() == 1


def test_end_user_id_over_255_characters_is_400(owner: Tenant) -> None:
    response = owner.client().delete(_delete_url(owner, "x" * 256))
    assert response.status_code == 400
    assert "external_user_id" in response.json()["error"]["fields"]


# --- Feedback ---------------------------------------------------------------


@pytest.mark.parametrize("scope", ["chat", "admin"])
def test_feedback_is_created_then_replaced(owner: Tenant, scope: str) -> None:
    session, messages = conversation(owner.workspace, external_user_id="alice")
    url = _feedback_url(owner.workspace.id, session, messages[1])
    client = owner.client(scope)

    first = client.post(
        url, {"external_user_id": "alice", "rating": "down", "comment": "wrong"}, format="json"
    )
    assert first.status_code == 201
    data = first.json()["data"]
    assert data["rating"] == "down" and data["comment"] == "wrong"
    assert data["message_id"] == str(messages[1].id) and data["session_id"] == str(session.id)
    assert data["external_user_id"] == "alice"

    again = client.post(url, {"external_user_id": "alice", "rating": "up"}, format="json")
    assert again.status_code == 200
    assert again.json()["data"]["id"] == data["id"]
    assert again.json()["data"]["rating"] == "up"
    assert again.json()["data"]["comment"] == ""
    assert Feedback.objects.count() == 1


def _rate_alices(owner: Tenant, index: int, body: dict[str, str]) -> Any:
    """A chat key's feedback ``body`` on message ``index`` of a new conversation of alice's."""
    session, messages = conversation(owner.workspace, external_user_id="alice")
    return owner.client("chat").post(
        _feedback_url(owner.workspace.id, session, messages[index]), body, format="json"
    )


def test_feedback_on_a_user_message_is_400(owner: Tenant) -> None:
    response = _rate_alices(owner, 0, {"external_user_id": "alice", "rating": "up"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"
    assert not Feedback.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        {"external_user_id": "alice", "rating": "meh"},
        {"rating": "up"},
        {"external_user_id": "", "rating": "up"},
    ],
)
def test_feedback_invalid_body_is_400(owner: Tenant, body: dict[str, str]) -> None:
    response = _rate_alices(owner, 1, body)
    assert response.status_code == 400
    assert response.json()["error"]["fields"]


def test_feedback_on_another_end_users_session_is_404(owner: Tenant) -> None:
    response = _rate_alices(owner, 1, {"external_user_id": "mallory", "rating": "down"})
    assert response.status_code == 404
    assert not Feedback.objects.exists()


def test_feedback_on_a_message_of_another_session_is_404(owner: Tenant) -> None:
    session, _ = conversation(owner.workspace, external_user_id="alice")
    _, other_messages = conversation(owner.workspace, external_user_id="alice")
    response = owner.client("chat").post(
        _feedback_url(owner.workspace.id, session, other_messages[1]),
        {"external_user_id": "alice", "rating": "up"},
        format="json",
    )
    assert response.status_code == 404


def test_feedback_on_a_foreign_message_is_404(owner: Tenant, outsider: Tenant) -> None:
    session, messages = conversation(owner.workspace, external_user_id="alice")
    body = {"external_user_id": "alice", "rating": "up"}
    # The outsider's keys, with the owner's workspace or with their own.
    for workspace_id in [owner.workspace.id, outsider.workspace.id]:
        for scope in ["chat", "admin"]:
            response = outsider.client(scope).post(
                _feedback_url(workspace_id, session, messages[1]), body, format="json"
            )
            assert response.status_code == 404, (workspace_id, scope)
            assert response.json()["error"]["code"] == "not_found"
    assert not Feedback.objects.exists()


# --- Retention --------------------------------------------------------------


def test_retention_deletes_only_expired_sessions(owner: Tenant, outsider: Tenant) -> None:
    now = timezone.now()
    owner.workspace.retention_days = 30
    owner.workspace.save()
    expired, expired_messages = conversation(owner.workspace, updated_at=now - dt.timedelta(days=31))
    feedback(expired_messages[1])
    fresh, _ = conversation(owner.workspace, updated_at=now - dt.timedelta(days=29))
    # Created long ago but active recently: last activity counts.
    active, _ = conversation(owner.workspace, updated_at=now - dt.timedelta(hours=1))
    Session.objects.filter(pk=active.pk).update(created_at=now - dt.timedelta(days=400))
    # No retention configured: kept whatever its age.
    ancient, _ = conversation(outsider.workspace, updated_at=now - dt.timedelta(days=3650))

    assert delete_expired_sessions() == 1
    assert delete_expired_sessions() == 0

    assert set(Session.objects.values_list("id", flat=True)) == {fresh.id, active.id, ancient.id}
    assert not Message.objects.filter(session_id=expired.id).exists()
    assert not Feedback.objects.exists()


def test_retention_works_in_batches(owner: Tenant) -> None:
    owner.workspace.retention_days = 1
    owner.workspace.save()
    old = timezone.now() - dt.timedelta(days=2)
    for i in range(5):
        conversation(owner.workspace, external_user_id=f"u{i}", updated_at=old)
    assert retention.sessions_expired_delete(batch_size=2) == 5
    assert not Session.objects.exists()


def test_retention_task_is_on_the_beat_schedule() -> None:
    entries = [
        e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == "chat.delete_expired_sessions"
    ]
    assert len(entries) == 1
    assert float(str(entries[0]["schedule"])) <= 3600
