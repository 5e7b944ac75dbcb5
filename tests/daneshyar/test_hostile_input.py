"""Hostile bodies and URLs on every kind of route: a NUL character in a path
or query value, and JSON nested far deeper than any body of the API. Each is
a 400 in the route's error shape, never a 500."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chat.models import Session
from daneshyar.parsers import MAX_JSON_DEPTH
from tests.conftest import Tenant
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("delete", "end-users/alice%00bob/"),
        ("get", "sessions/?external_user_id=alice%00"),
        ("get", "sessions/?cursor=%00"),
        ("get", "transcripts/?external_user_id=%00"),
        ("get", "resources/?status=ready%00"),
        ("get", "sessions/%00/"),
        ("get", "guard-rules/?x%00=1"),
    ],
)
def test_a_nul_in_a_path_or_query_value_is_a_400(owner: Tenant, method: str, path: str) -> None:
    client = owner.client()
    response = getattr(client, method)(f"/api/v1/workspaces/{owner.workspace.id}/{path}")
    assert response.status_code == 400, response.content[:300]
    assert response.json()["status"] == "error"
    assert response.json()["error"]["code"] == "validation_error"
    assert "NUL" in response.json()["error"]["message"]


def test_a_nul_on_the_openai_endpoint_is_a_400_in_its_shape(owner: Tenant) -> None:
    response = owner.client().get(f"/api/v1/workspaces/{owner.workspace.id}/openai/v1/models?x=%00")
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_a_nul_outside_the_api_is_a_400_too() -> None:
    from django.test import Client

    assert Client().get("/healthz?probe=%00").status_code == 400


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 1_000, 100_000])
@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("chat/", lambda deep: {"external_user_id": "u1", "message": "Hi", "resource_ids": deep}),
        ("guard-rules/", lambda deep: {"rules": deep}),
        ("resources/", lambda deep: {"title": "t", "text": deep}),
    ],
)
def test_json_nested_too_deep_is_a_400(owner: Tenant, depth: int, path: str, body: Any) -> None:
    raw = json.dumps(body("DEEP")).replace('"DEEP"', _nested(depth))
    url = f"/api/v1/workspaces/{owner.workspace.id}/{path}"
    method = owner.client().put if path == "guard-rules/" else owner.client().post
    response = method(url, data=raw, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert "nested deeper" in response.json()["error"]["message"]
    assert not Session.objects.exists()


def test_a_deep_bulk_upload_is_a_400(owner: Tenant) -> None:
    url = f"/api/v1/workspaces/{owner.workspace.id}/resources/batch/"
    for body, content_type in (
        (_nested(1_000), "application/json"),
        ('{"title": "a", "text": "b"}\n' + _nested(1_000), "application/x-ndjson"),
    ):
        response = owner.client().post(url, data=body, content_type=content_type)
        assert response.status_code == 400, response.content[:300]


def test_json_as_deep_as_the_limit_still_parses(owner: Tenant) -> None:
    """The limit refuses only the hostile: a body at the limit reaches the view
    (which then finds the field's type wrong)."""
    raw = json.dumps({"name": "DEEP"}).replace('"DEEP"', _nested(MAX_JSON_DEPTH - 1))
    response = owner.client().post("/api/v1/workspaces/", data=raw, content_type="application/json")
    assert response.status_code == 400
    assert "name" in response.json()["error"]["fields"]
    assert not Workspace.objects.exclude(id=owner.workspace.id).exists()


@pytest.mark.parametrize("field", ["name", "system_prompt", "no_answer_text", "small_talk_text"])
def test_a_number_where_text_is_expected_is_a_400(owner: Tenant, field: str) -> None:
    """Text fields take JSON strings only: DRF's CharField would store 616761392 as "616761392"."""
    body = {"name": "Claims", field: 616761392}
    created = owner.client().post("/api/v1/workspaces/", body, format="json")
    assert created.status_code == 400 and field in created.json()["error"]["fields"]
    updated = owner.client().patch(f"/api/v1/workspaces/{owner.workspace.id}/", {field: 12}, format="json")
    assert updated.status_code == 400 and field in updated.json()["error"]["fields"]
    assert not Workspace.objects.filter(name="Claims").exists()
