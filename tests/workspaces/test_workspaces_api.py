from __future__ import annotations

import uuid

import pytest
from django.core.management import call_command

from tests.conftest import Tenant, api_client
from tests.factories import WorkspaceFactory
from workspaces import services
from workspaces.models import ApiKeyScope, Workspace

pytestmark = pytest.mark.django_db


def url(workspace_id: object | None = None) -> str:
    return "/api/v1/workspaces/" if workspace_id is None else f"/api/v1/workspaces/{workspace_id}/"


def test_admin_key_lists_its_organizations_workspaces_only(owner: Tenant, outsider: Tenant) -> None:
    response = owner.client().get(url())
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert [w["id"] for w in body["data"]["items"]] == [str(owner.workspace.id)]
    assert body["data"]["next_cursor"] is None
    item = body["data"]["items"][0]
    assert item["top_k"] == 5 and item["widened_top_k"] == 15
    assert item["per_resource_k"] == 3 and item["history_turns"] == 20


def test_create_update_delete_workspace(owner: Tenant) -> None:
    client = owner.client()
    created = client.post(url(), {"name": "Claims", "system_prompt": "Be brief.", "top_k": 7}, format="json")
    assert created.status_code == 201, created.json()
    data = created.json()["data"]
    assert data["name"] == "Claims" and data["top_k"] == 7 and data["widened_top_k"] == 15
    updated = client.patch(url(data["id"]), {"history_turns": 2}, format="json")
    assert updated.status_code == 200
    assert updated.json()["data"]["history_turns"] == 2
    assert updated.json()["data"]["name"] == "Claims"
    assert client.delete(url(data["id"])).status_code == 204
    assert not Workspace.objects.filter(pk=data["id"]).exists()
    assert client.get(url(data["id"])).status_code == 404


def test_invalid_settings_get_400_with_fields(owner: Tenant) -> None:
    response = owner.client().post(url(), {"name": "", "top_k": 0, "history_turns": "x"}, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert set(error["fields"]) == {"name", "top_k", "history_turns"}


def test_outsider_gets_404_for_read_update_and_delete(owner: Tenant, outsider: Tenant) -> None:
    client = outsider.client()
    target = url(owner.workspace.id)
    for response in (
        client.get(target),
        client.patch(target, {"name": "taken"}, format="json"),
        client.delete(target),
    ):
        assert response.status_code == 404
        assert response.json() == {"status": "error", "error": {"code": "not_found", "message": "Not found."}}
    owner.workspace.refresh_from_db()
    assert owner.workspace.name != "taken"


def test_key_limited_to_workspace_x_gets_404_on_y(owner: Tenant) -> None:
    other = WorkspaceFactory.create(organization=owner.organization)
    limited = services.api_key_create(
        organization=owner.organization,
        name="x only",
        scope=ApiKeyScope.ADMIN,
        workspace_ids=[owner.workspace.id],
    )
    client = api_client(limited.plaintext)
    assert client.get(url(owner.workspace.id)).status_code == 200
    assert client.get(url(other.id)).status_code == 404
    assert client.delete(url(other.id)).status_code == 404
    listed = client.get(url()).json()["data"]["items"]
    assert [w["id"] for w in listed] == [str(owner.workspace.id)]
    assert client.post(url(), {"name": "new"}, format="json").status_code == 403


def test_chat_key_on_admin_endpoint_gets_403(owner: Tenant) -> None:
    response = owner.client("chat").get(url())
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"


def test_unknown_workspace_id_is_404(owner: Tenant) -> None:
    assert owner.client().get(url(uuid.uuid4())).status_code == 404


def test_pagination_walks_every_workspace_once(owner: Tenant) -> None:
    for _ in range(4):
        WorkspaceFactory.create(organization=owner.organization)
    client = owner.client()
    seen: list[str] = []
    cursor = None
    while True:
        response = client.get(url(), {"limit": 2, **({"cursor": cursor} if cursor else {})})
        data = response.json()["data"]
        seen += [w["id"] for w in data["items"]]
        cursor = data["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == 5 == len(set(seen))
    assert client.get(url(), {"limit": 0}).status_code == 400
    assert client.get(url(), {"cursor": "garbage!"}).status_code == 400


def test_models_endpoint_lists_the_registry(owner: Tenant) -> None:
    response = owner.client("chat").get("/api/v1/models/")
    assert response.status_code == 200
    items = response.json()["data"]["items"]
    # The embedded default: the extractive engine first, SmolLM2 selectable.
    assert items == [
        {
            "id": "extractive",
            "backend": "extractive",
            "default": True,
            "capabilities": {"generative": False, "forms": True, "streaming": True, "context_length": None},
        },
        {
            "id": "smollm2-135m-instruct",
            "backend": "local",
            "default": False,
            # Read from the GGUF file's header, without loading the model.
            "capabilities": {"generative": True, "forms": True, "streaming": True, "context_length": 8192},
        },
    ]


def test_malformed_json_is_400_envelope(owner: Tenant) -> None:
    response = owner.client().post(url(), data='{"name": ', content_type="application/json")
    assert response.status_code == 400
    assert response.json()["status"] == "error"
    assert response.json()["error"]["code"] == "validation_error"


def test_unknown_route_is_404_envelope(owner: Tenant) -> None:
    response = owner.client().get("/api/v1/nowhere/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_oversize_body_is_413_envelope(owner: Tenant, settings: object) -> None:
    big = '{"name": "' + "a" * (1_048_576 + 10) + '"}'
    response = owner.client().post(url(), data=big, content_type="application/json")
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
    assert not Workspace.objects.filter(name__startswith="aaaa").exists()


def test_unhandled_error_is_500_without_internals(owner: Tenant, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(**kwargs: object) -> None:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(services, "workspace_update", boom)
    response = owner.client().patch(url(owner.workspace.id), {"name": "x"}, format="json")
    assert response.status_code == 500
    assert response.json() == {
        "status": "error",
        "error": {"code": "internal_error", "message": "An internal error occurred."},
    }


def test_migrations_are_complete() -> None:
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_health_endpoints_need_no_key(db: None) -> None:
    client = api_client(None)
    assert client.get("/healthz").json() == {"status": "ok", "data": {"alive": True}}
    response = client.get("/readyz")
    assert response.status_code == 200, response.json()
    assert response.json()["data"]["checks"] == {
        "database": "ok",
        "broker": "ok",
        "embedding_model": "ok",
        "generation_backend": "ok",
    }


def test_openapi_schema_and_docs_are_served(db: None) -> None:
    client = api_client(None)
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/v1/workspaces/" in schema.content
    assert client.get("/api/docs/").status_code == 200
