from __future__ import annotations

from typing import Any

import pytest

from chat.backends.scripted import ScriptedBackend
from chat.models import Session
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db


def start(tenant: Tenant, user: str, message: str) -> str:
    response = tenant.client("chat").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/chat/",
        {"external_user_id": user, "message": message},
        format="json",
    )
    assert response.status_code == 200, response.json()
    return str(response.json()["data"]["session"]["id"])


def sessions_url(tenant: Tenant, suffix: str = "") -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/sessions/{suffix}"


def test_list_is_most_recently_active_first_and_paginated(owner: Tenant, scripted: ScriptedBackend) -> None:
    ids = [start(owner, "alice", f"topic {n}") for n in range(3)]
    # Activity in the oldest session moves it to the top.
    owner.client("chat").post(
        f"/api/v1/workspaces/{owner.workspace.id}/chat/",
        {"external_user_id": "alice", "message": "more", "session_id": ids[0]},
        format="json",
    )
    client = owner.client("chat")
    query: dict[str, str | int] = {"external_user_id": "alice", "limit": 2}
    page = client.get(sessions_url(owner), query).json()["data"]
    assert [s["id"] for s in page["items"]] == [ids[0], ids[2]]
    item = page["items"][0]
    assert set(item) == {"id", "title", "external_user_id", "message_count", "created_at", "updated_at"}
    assert item["message_count"] == 4 and item["external_user_id"] == "alice"
    rest = client.get(
        sessions_url(owner), {"external_user_id": "alice", "limit": 2, "cursor": page["next_cursor"]}
    ).json()["data"]
    assert [s["id"] for s in rest["items"]] == [ids[1]]
    assert rest["next_cursor"] is None


def test_chat_keys_must_name_the_end_user_admin_keys_may_list_everyone(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    start(owner, "alice", "a")
    start(owner, "bob", "b")
    response = owner.client("chat").get(sessions_url(owner))
    assert response.status_code == 400
    assert "external_user_id" in response.json()["error"]["fields"]
    everyone = owner.client("admin").get(sessions_url(owner)).json()["data"]["items"]
    assert {s["external_user_id"] for s in everyone} == {"alice", "bob"}


def test_get_rename_and_delete(owner: Tenant, scripted: ScriptedBackend) -> None:
    session_id = start(owner, "alice", "Original title")
    client = owner.client("chat")
    detail = sessions_url(owner, f"{session_id}/?external_user_id=alice")
    assert client.get(detail).json()["data"]["title"] == "Original title"
    renamed = client.patch(detail, {"title": "  Renamed  "}, format="json")
    assert renamed.status_code == 200
    assert renamed.json()["data"]["title"] == "Renamed"
    assert client.patch(detail, {"title": ""}, format="json").status_code == 400
    assert client.delete(detail).status_code == 204
    assert not Session.objects.filter(id=session_id).exists()
    assert client.get(detail).status_code == 404


def test_messages_are_oldest_first_in_the_chat_shape(owner: Tenant, scripted: ScriptedBackend) -> None:
    session_id = start(owner, "alice", "one")
    client = owner.client("chat")
    client.post(
        f"/api/v1/workspaces/{owner.workspace.id}/chat/",
        {"external_user_id": "alice", "message": "two", "session_id": session_id},
        format="json",
    )
    url = sessions_url(owner, f"{session_id}/messages/")
    query: dict[str, str | int] = {"external_user_id": "alice", "limit": 3}
    first: dict[str, Any] = client.get(url, query).json()["data"]
    items = first["items"]
    assert [(m["role"], m["content"]) for m in items] == [
        ("user", "one"),
        ("assistant", "Scripted answer."),
        ("user", "two"),
    ]
    assert set(items[0]) == {"id", "role", "content", "created_at"}
    assert set(items[1]) == {
        "id",
        "role",
        "content",
        "response",
        "grounding",
        "model",
        "degraded",
        "provenance",
        "guard",
        "created_at",
    }
    rest = client.get(url, {"external_user_id": "alice", "cursor": first["next_cursor"]}).json()["data"]
    assert [m["role"] for m in rest["items"]] == ["assistant"]
    assert rest["next_cursor"] is None


def test_admin_may_read_any_end_users_session(owner: Tenant, scripted: ScriptedBackend) -> None:
    session_id = start(owner, "alice", "one")
    admin = owner.client("admin")
    assert admin.get(sessions_url(owner, f"{session_id}/")).status_code == 200
    assert admin.get(sessions_url(owner, f"{session_id}/"), {"external_user_id": "bob"}).status_code == 404
