"""POST /api/v1/workspaces/{id}/search/: contract, tenancy and validation."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.test import override_settings

from tests.conftest import Tenant
from tests.retrieval.conftest import make_resource
from tests.retrieval.corpus import COOKING, KNITTING, SOLAR

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

QUERY = "How do solar panels generate electricity?"


def _url(tenant: Tenant) -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/search/"


def _post(tenant: Tenant, body: dict[str, Any], scope: str = "chat", url: str | None = None) -> Any:
    return tenant.client(scope).post(url or _url(tenant), body, format="json")


@pytest.mark.parametrize("scope", ["chat", "admin"])
def test_chat_and_admin_keys_search(owner: Tenant, scope: str) -> None:
    make_resource(owner.workspace, "Solar", SOLAR[:8])
    make_resource(owner.workspace, "Cooking", COOKING)
    response = _post(owner, {"query": QUERY}, scope)
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["data"]["next_cursor"] is None
    items = body["data"]["items"]
    assert len(items) == 5
    assert set(items[0]) == {
        "passage_id",
        "resource_id",
        "resource_title",
        "text",
        "score",
        "rank",
        "language",
        "page",
        "bbox",
    }
    assert {i["language"] for i in items} == {"en"}  # detected at ingestion
    # Text documents have no pages (contract v1.4).
    assert {(i["page"], i["bbox"]) for i in items} == {(None, None)}
    assert [i["rank"] for i in items] == [1, 2, 3, 4, 5]
    assert [i["score"] for i in items] == sorted((i["score"] for i in items), reverse=True)
    assert all(i["resource_title"] == "Solar" for i in items)


def test_top_k_and_resource_ids(owner: Tenant) -> None:
    make_resource(owner.workspace, "Solar", SOLAR)
    knitting = make_resource(owner.workspace, "Knitting", KNITTING)
    assert len(_post(owner, {"query": QUERY, "top_k": 2}).json()["data"]["items"]) == 2
    items = _post(owner, {"query": QUERY, "resource_ids": [str(knitting.id)]}).json()["data"]["items"]
    assert len(items) == 18
    assert sum(i["resource_id"] == str(knitting.id) for i in items) == 3


def test_outsider_gets_404(owner: Tenant, outsider: Tenant) -> None:
    make_resource(owner.workspace, "Solar", SOLAR[:3])
    for scope in ("chat", "admin"):
        response = _post(outsider, {"query": QUERY}, scope, url=_url(owner))
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"


def test_outsider_gets_404_even_with_an_invalid_body(owner: Tenant, outsider: Tenant) -> None:
    response = _post(outsider, {"query": ""}, url=_url(owner))
    assert response.status_code == 404


def test_missing_key_is_401(owner: Tenant) -> None:
    from tests.conftest import api_client

    response = api_client(None).post(_url(owner), {"query": QUERY}, format="json")
    assert response.status_code == 401


def test_empty_workspace_returns_an_empty_list(owner: Tenant) -> None:
    response = _post(owner, {"query": QUERY})
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "data": {"items": [], "next_cursor": None}}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "query"),
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({"query": QUERY, "top_k": 0}, "top_k"),
        ({"query": QUERY, "top_k": 51}, "top_k"),
        ({"query": QUERY, "top_k": "many"}, "top_k"),
        ({"query": QUERY, "resource_ids": [str(uuid.uuid4()) for _ in range(21)]}, "resource_ids"),
        ({"query": QUERY, "resource_ids": ["not-a-uuid"]}, "resource_ids[0]"),
        ({"query": QUERY, "resource_ids": "not-a-list"}, "resource_ids"),
        ({"query": QUERY, "resource_ids": [str(uuid.uuid4())]}, "resource_ids"),
    ],
)
def test_invalid_input_is_a_400_envelope(owner: Tenant, body: dict[str, Any], field: str | None) -> None:
    make_resource(owner.workspace, "Solar", SOLAR[:2])
    response = _post(owner, body)
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    if field is not None:
        assert field in error["fields"]


def test_another_organizations_resource_id_is_a_400(owner: Tenant, outsider: Tenant) -> None:
    make_resource(owner.workspace, "Solar", SOLAR[:2])
    theirs = make_resource(outsider.workspace, "Theirs", KNITTING[:1])
    response = _post(owner, {"query": QUERY, "resource_ids": [str(theirs.id)]})
    assert response.status_code == 400
    assert "resource_ids" in response.json()["error"]["fields"]


@override_settings(MAX_QUERY_CHARS=20)
def test_over_long_query_is_a_400(owner: Tenant) -> None:
    assert _post(owner, {"query": "x" * 20}).status_code == 200
    response = _post(owner, {"query": "x" * 21})
    assert response.status_code == 400
    assert "query" in response.json()["error"]["fields"]


def test_malformed_json_is_a_400(owner: Tenant) -> None:
    response = owner.client("chat").post(_url(owner), "{nope", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"
