"""Query parameters are data, not an HTML form: an empty value is invalid,
never "not sent" (found by schema fuzzing: ``?status=`` listed every
resource, ``?updated_since=`` exported everything, ``?limit=`` was the
default page)."""

from __future__ import annotations

import pytest

from tests.conftest import Tenant
from tests.responses import streamed
from tests.transcripts.factories import conversation

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("path", "query", "field"),
    [
        ("resources/", "status=", "status"),
        ("resources/", "limit=", "limit"),
        ("resources/", "cursor=", "cursor"),
        ("sessions/", "limit=", "limit"),
        ("transcripts/", "updated_since=", "updated_since"),
        ("transcripts/", "pseudonymize=", "pseudonymize"),
    ],
)
def test_an_empty_query_value_is_a_400_naming_the_field(
    owner: Tenant, path: str, query: str, field: str
) -> None:
    response = owner.client().get(f"/api/v1/workspaces/{owner.workspace.id}/{path}?{query}")
    assert response.status_code == 400, response.content
    assert field in response.json()["error"]["fields"]


def test_an_empty_page_query_on_the_workspace_list_is_a_400(owner: Tenant) -> None:
    response = owner.client().get("/api/v1/workspaces/?limit=")
    assert response.status_code == 400
    assert "limit" in response.json()["error"]["fields"]


def test_given_values_still_filter(owner: Tenant) -> None:
    conversation(owner.workspace, external_user_id="alice")
    client = owner.client()
    base = f"/api/v1/workspaces/{owner.workspace.id}"
    assert client.get(f"{base}/resources/?status=ready&limit=5").status_code == 200
    lines = client.get(f"{base}/transcripts/?updated_since=2000-01-01T00:00:00Z&pseudonymize=true")
    assert lines.status_code == 200
    assert len(streamed(lines).splitlines()) == 1


def _cursor(values: object) -> str:
    import base64
    import json

    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode().rstrip("=")


CRAFTED = [
    ["abc"],
    ["abc", "def"],
    [10**30],
    [10**30, "x"],
    [1e308],
    [None],
    [[1]],
    [{"a": 1}],
    ["2020-13-45T00:00:00Z", "6f1c9a40-0000-4000-8000-000000000000"],
    ["2020-01-01T00:00:00Z", "not-a-uuid"],
]


@pytest.mark.parametrize("values", CRAFTED, ids=[str(v)[:30] for v in CRAFTED])
def test_a_crafted_cursor_is_a_400_on_every_list(owner: Tenant, values: object) -> None:
    """A cursor decoded to values of the wrong type or range was a 500 on the
    integer-ordered lists (messages, passages)."""
    from tests.chat.helpers import ingest_text

    workspace = owner.workspace
    resource = ingest_text(workspace, "Guide", "Some text here.")
    session, _ = conversation(workspace, external_user_id="u")
    lists = [
        f"/api/v1/workspaces/{workspace.id}/resources/{resource.id}/passages/?",
        f"/api/v1/workspaces/{workspace.id}/sessions/{session.id}/messages/?external_user_id=u&",
        f"/api/v1/workspaces/{workspace.id}/sessions/?external_user_id=u&",
        f"/api/v1/workspaces/{workspace.id}/resources/?",
        "/api/v1/workspaces/?",
    ]
    for path in lists:
        response = owner.client("admin").get(f"{path}cursor={_cursor(values)}")
        assert response.status_code == 400, (path, response.content)
        assert response.json()["error"]["fields"] == {"cursor": ["Invalid cursor."]}


def test_a_real_cursor_still_pages(owner: Tenant) -> None:
    session, messages = conversation(owner.workspace, external_user_id="u")
    url = (
        f"/api/v1/workspaces/{owner.workspace.id}/sessions/{session.id}/messages/?external_user_id=u&limit=1"
    )
    first = owner.client().get(url).json()["data"]
    second = owner.client().get(f"{url}&cursor={first['next_cursor']}").json()["data"]
    assert [m["id"] for m in first["items"]] + [m["id"] for m in second["items"]] == [
        str(m.id) for m in messages
    ]


@pytest.mark.parametrize("value", [False, True, 0, 7, 1.5])
def test_a_uuid_must_be_a_string(owner: Tenant, value: object) -> None:
    """Found by schema fuzzing: DRF's UUIDField took ``false`` as the nil
    UUID (a guard rule ``{"id": false}`` was accepted)."""
    workspace = owner.workspace.id
    rule = {"id": value, "pattern": "approved", "action": "flag"}
    response = owner.client("admin").put(
        f"/api/v1/workspaces/{workspace}/guard-rules/", {"rules": [rule]}, format="json"
    )
    assert response.status_code == 400
    assert "rules[0].id" in response.json()["error"]["fields"]
    for body in ({"session_id": value}, {"resource_ids": [value]}):
        chat = owner.client("chat").post(
            f"/api/v1/workspaces/{workspace}/chat/",
            {"message": "hi", "external_user_id": "u", **body},
            format="json",
        )
        assert chat.status_code == 400, chat.content
