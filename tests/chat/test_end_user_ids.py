"""What an ``external_user_id`` may be: a string (never a number quietly
turned into one), not the ``console:`` prefix of the admin console's
playground, and checked before any end user's rate limit is charged.
The extractive engine answers (no generation)."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_django import Settings

from chat.models import Feedback, Message, Session
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db


def url(tenant: Tenant, path: str) -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/{path}"


def chat(tenant: Tenant, path: str = "chat/", scope: str = "chat", **body: Any) -> Any:
    return tenant.client(scope).post(url(tenant, path), body, format="json")


def openai(tenant: Tenant, **body: Any) -> Any:
    body = {"model": "extractive", "messages": [{"role": "user", "content": "Hi"}], **body}
    return tenant.client("chat").post(url(tenant, "openai/v1/chat/completions"), body, format="json")


@pytest.mark.parametrize("value", [12345, 1.5, True, ["u1"], {"id": "u1"}])
def test_a_non_string_end_user_is_refused(owner: Tenant, value: Any) -> None:
    response = chat(owner, external_user_id=value, message="Hello?")
    assert response.status_code == 400
    assert "external_user_id" in response.json()["error"]["fields"]
    response = openai(owner, user=value)
    assert response.status_code == 400
    assert not Session.objects.exists()


def test_feedback_refuses_a_number_as_end_user(owner: Tenant) -> None:
    data = chat(owner, external_user_id="12345", message="Hello?").json()["data"]
    path = f"sessions/{data['session']['id']}/messages/{data['assistant_message']['id']}/feedback/"
    response = owner.client("chat").post(
        url(owner, path), {"external_user_id": 12345, "rating": "up"}, format="json"
    )
    assert response.status_code == 400
    assert not Feedback.objects.exists()


@pytest.fixture
def tight(settings: Settings) -> Settings:
    settings.RATE_LIMIT_CHAT_PER_USER_PER_MINUTE = 2
    return settings


@pytest.mark.parametrize(
    "bad",
    [
        {"message": ""},
        {"message": "Hello?", "messages": [{"role": "user", "content": "Hi"}]},
        {"message": "Hello?", "session_id": "not-a-uuid"},
        {"message": "Hello?", "resource_ids": "x"},
    ],
)
def test_an_invalid_body_neither_charges_nor_reveals_the_end_users_limit(
    owner: Tenant, tight: Settings, bad: dict[str, Any]
) -> None:
    for _ in range(3):
        response = chat(owner, external_user_id="alice", **bad)
        assert response.status_code == 400
        # Only the key's own limits may show; the end user's (2 a minute) does not.
        assert response.get("RateLimit-Limit") != "2"
    ok = chat(owner, external_user_id="alice", message="Hello?")
    assert ok.status_code == 200
    assert ok["RateLimit-Limit"] == "2" and ok["RateLimit-Remaining"] == "1"


def test_an_invalid_openai_body_does_not_charge_the_end_user(owner: Tenant, tight: Settings) -> None:
    for _ in range(3):
        assert openai(owner, user="alice", n=2).status_code == 400
    response = openai(owner, user="alice")
    assert response.status_code == 200
    assert response["RateLimit-Remaining"] == "1"


@pytest.fixture
def playground(owner: Tenant) -> Session:
    """A session of the console's playground (console/playground.py stores them so)."""
    session = Session.objects.create(workspace=owner.workspace, external_user_id="console:curator", title="t")
    Message.objects.create(session=session, sequence=0, role="user", content="A curator's test question")
    return session


@pytest.mark.parametrize("value", ["console:curator", "console:", "console:anyone:label"])
def test_the_console_prefix_is_refused_on_every_route(owner: Tenant, playground: Session, value: str) -> None:
    assert chat(owner, external_user_id=value, message="Hello?").status_code == 400
    assert chat(owner, "chat/stream/", external_user_id=value, message="Hello?").status_code == 400
    assert openai(owner, user=value).status_code == 400
    for scope in ("chat", "admin"):
        client = owner.client(scope)
        assert client.get(url(owner, f"sessions/?external_user_id={value}")).status_code == 400
        assert (
            client.get(url(owner, f"sessions/{playground.id}/?external_user_id={value}")).status_code == 400
        )
    assert owner.client().delete(url(owner, f"end-users/{value}/")).status_code == 400
    assert Session.objects.filter(external_user_id="console:curator").count() == 1


def test_admin_keys_neither_list_nor_open_playground_sessions(owner: Tenant, playground: Session) -> None:
    mine = chat(owner, external_user_id="alice", message="Hello?").json()["data"]["session"]["id"]
    client = owner.client("admin")
    listed = client.get(url(owner, "sessions/")).json()["data"]["items"]
    assert [s["id"] for s in listed] == [mine]
    for path in (f"sessions/{playground.id}/", f"sessions/{playground.id}/messages/"):
        assert client.get(url(owner, path)).status_code == 404
    assert (
        client.patch(url(owner, f"sessions/{playground.id}/"), {"title": "x"}, format="json").status_code
        == 404
    )
    assert client.delete(url(owner, f"sessions/{playground.id}/")).status_code == 404
    playground.refresh_from_db()
    assert playground.title == "t"


def test_every_session_an_api_client_can_create_is_in_the_export(owner: Tenant, playground: Session) -> None:
    for user in ("alice", "console", "Console:x", " console:x"):
        assert chat(owner, external_user_id=user, message="Hello?").status_code == 200
    body = owner.client().get(url(owner, "transcripts/"))
    lines = b"".join(body.streaming_content).decode().splitlines()  # type: ignore[attr-defined]
    exported = sorted(line.split('"external_user_id":"')[1].split('"')[0] for line in lines)
    assert exported == sorted(["alice", "console", "Console:x", " console:x"])
