"""CORS per workspace (workspaces/cors.py, django-cors-headers): only the
end-user routes, only for listed origins, only for end-user tokens — never
for a request that carries an API key, never on admin routes."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.forms.models import model_to_dict
from django.test import Client, RequestFactory
from pytest_django import Settings

from tests.conftest import Tenant, api_client, token_client
from tests.factories import WorkspaceFactory
from tests.responses import response_body
from workspaces import tokens
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db

SHOP = "https://shop.example"
ELSEWHERE = "https://evil.example"


@pytest.fixture
def listed(owner: Tenant) -> Tenant:
    owner.workspace.allowed_origins = [SHOP, "http://localhost:8080"]
    owner.workspace.save()
    return owner


def token(tenant: Tenant, user: str = "alice") -> str:
    return tokens.end_user_token_mint(workspace=tenant.workspace, external_user_id=user).token


def url(tenant: Tenant, rest: str = "") -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/{rest}"


def preflight(
    path: str, origin: str, *, method: str = "POST", headers: str = "authorization, content-type"
) -> Any:
    return api_client(None).options(
        path,
        HTTP_ORIGIN=origin,
        HTTP_ACCESS_CONTROL_REQUEST_METHOD=method,
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS=headers,
    )


def cors_headers(response: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in response.headers.items() if k.lower().startswith("access-control-")}


def test_a_preflight_from_a_listed_origin_on_a_token_route_is_allowed(listed: Tenant) -> None:
    for rest in ("chat/", "chat/stream/", "sessions/", "openai/v1/chat/completions"):
        response = preflight(url(listed, rest), SHOP)
        assert response.status_code == 200, rest
        headers = cors_headers(response)
        assert headers["access-control-allow-origin"] == SHOP
        allowed = {h.strip() for h in headers["access-control-allow-headers"].split(",")}
        assert {"authorization", "content-type", "idempotency-key", "last-event-id"} <= allowed
        assert "x-api-key" not in allowed
        assert "access-control-allow-credentials" not in headers


def test_a_preflight_from_an_unlisted_origin_gets_no_cors_headers(listed: Tenant) -> None:
    for origin in (ELSEWHERE, "https://shop.example:8443", "http://shop.example", "null"):
        response = preflight(url(listed, "chat/"), origin)
        assert response.status_code == 200  # answered without credentials, but not allowed
        assert cors_headers(response) == {}, origin


def test_admin_routes_never_answer_a_browser(listed: Tenant) -> None:
    for rest in ("", "resources/", "search/", "transcripts/", "guard-rules/", "end-user-tokens/"):
        assert cors_headers(preflight(url(listed, rest), SHOP)) == {}, rest
        response = api_client(listed.admin_key).get(url(listed, rest), HTTP_ORIGIN=SHOP)
        assert cors_headers(response) == {}, rest
    assert cors_headers(preflight("/api/v1/workspaces/", SHOP, method="GET")) == {}


def test_a_preflight_announcing_an_api_key_is_refused(listed: Tenant) -> None:
    response = preflight(url(listed, "chat/"), SHOP, headers="x-api-key, content-type")
    assert cors_headers(response) == {}


def test_a_token_request_from_a_listed_origin_gets_the_headers(listed: Tenant) -> None:
    response = token_client(token(listed)).get(url(listed, "sessions/"), HTTP_ORIGIN=SHOP)
    assert response.status_code == 200
    headers = cors_headers(response)
    assert headers["access-control-allow-origin"] == SHOP
    exposed = {h.strip().lower() for h in headers["access-control-expose-headers"].split(",")}
    assert {"ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "retry-after"} <= exposed
    assert "access-control-allow-credentials" not in headers
    assert "origin" in response["Vary"].lower()
    stream = token_client(token(listed)).post(
        url(listed, "chat/stream/"), {"message": "Hi"}, format="json", HTTP_ORIGIN=SHOP
    )
    assert stream.status_code == 200 and cors_headers(stream)["access-control-allow-origin"] == SHOP
    assert response_body(stream).startswith(b"event: session")


def test_api_key_requests_never_get_cors_headers(listed: Tenant) -> None:
    bearer = api_client(None)
    bearer.credentials(HTTP_AUTHORIZATION=f"Bearer {listed.chat_key}")
    for client in (listed.client("chat"), listed.client("admin"), bearer):
        response = client.get(url(listed, "sessions/"), {"external_user_id": "alice"}, HTTP_ORIGIN=SHOP)
        assert response.status_code == 200
        assert cors_headers(response) == {}
    # Not even beside a valid token.
    both = token_client(token(listed))
    both.credentials(HTTP_AUTHORIZATION=f"Bearer {token(listed)}", HTTP_X_API_KEY=listed.chat_key)
    assert (
        cors_headers(both.get(url(listed, "sessions/"), {"external_user_id": "alice"}, HTTP_ORIGIN=SHOP))
        == {}
    )


def test_an_origin_listed_by_another_workspace_is_not_allowed_here(owner: Tenant) -> None:
    other = WorkspaceFactory.create(organization=owner.organization, allowed_origins=[SHOP])
    assert other.allowed_origins == [SHOP]
    assert cors_headers(preflight(url(owner, "chat/"), SHOP)) == {}
    response = token_client(token(owner)).get(url(owner, "sessions/"), HTTP_ORIGIN=SHOP)
    assert cors_headers(response) == {}


def test_errors_to_an_allowed_browser_are_readable(listed: Tenant, settings: Settings) -> None:
    """A page can read why it was refused: 401 and 429 carry the CORS headers."""
    expired = api_client(None)
    expired.credentials(HTTP_AUTHORIZATION="Bearer not.a.token")
    refused = expired.get(url(listed, "sessions/"), HTTP_ORIGIN=SHOP)
    assert refused.status_code == 401 and cors_headers(refused)["access-control-allow-origin"] == SHOP
    settings.RATE_LIMIT_CHAT_PER_USER_PER_MINUTE = 1
    client = token_client(token(listed))
    assert (
        client.post(url(listed, "chat/"), {"message": "Hi"}, format="json", HTTP_ORIGIN=SHOP).status_code
        == 200
    )
    limited = client.post(url(listed, "chat/"), {"message": "Hi"}, format="json", HTTP_ORIGIN=SHOP)
    assert limited.status_code == 429 and cors_headers(limited)["access-control-allow-origin"] == SHOP


def test_models_follow_the_tokens_workspace(listed: Tenant) -> None:
    response = token_client(token(listed)).get("/api/v1/models/", HTTP_ORIGIN=SHOP)
    assert response.status_code == 200 and cors_headers(response)["access-control-allow-origin"] == SHOP
    assert (
        cors_headers(preflight("/api/v1/models/", SHOP, method="GET"))["access-control-allow-origin"] == SHOP
    )
    assert cors_headers(preflight("/api/v1/models/", ELSEWHERE, method="GET")) == {}
    assert cors_headers(token_client(token(listed)).get("/api/v1/models/", HTTP_ORIGIN=ELSEWHERE)) == {}


def test_allowed_origins_are_validated_and_stored_as_browsers_send_them(owner: Tenant) -> None:
    client = owner.client("admin")
    response = client.patch(
        url(owner),
        {"allowed_origins": ["https://Shop.Example:443/", "http://localhost:8080", "https://shop.example"]},
        format="json",
    )
    assert response.status_code == 200
    assert response.json()["data"]["allowed_origins"] == ["https://shop.example", "http://localhost:8080"]
    bad = [
        "*",
        "https://*.example",
        "ftp://shop.example",
        "https://shop.example/path",
        "shop.example",
        "https://user@shop.example",
        "https://shop.example?x=1",
        "null",
        "https://bücher.example",
        "",
    ]
    for value in bad:
        refused = client.patch(url(owner), {"allowed_origins": ["https://ok.example", value]}, format="json")
        assert refused.status_code == 400, value
        assert "allowed_origins[1]" in refused.json()["error"]["fields"], value
    assert (
        client.patch(url(owner), {"allowed_origins": "https://shop.example"}, format="json").status_code
        == 400
    )
    assert (
        client.patch(url(owner), {"allowed_origins": []}, format="json").json()["data"]["allowed_origins"]
        == []
    )
    many = [f"https://s{n}.example" for n in range(51)]
    assert client.patch(url(owner), {"allowed_origins": many}, format="json").status_code == 400
    assert (
        owner.client("chat").patch(url(owner), {"allowed_origins": [SHOP]}, format="json").status_code == 403
    )


def test_the_console_form_shows_and_validates_allowed_origins(owner: Tenant, admin_user: Any) -> None:
    client = Client()
    client.force_login(admin_user)
    page = client.get(f"/admin/workspaces/workspace/{owner.workspace.id}/change/")
    assert page.status_code == 200 and 'name="allowed_origins"' in page.content.decode()
    assert "token_secret" not in page.content.decode()
    request = RequestFactory().get("/")
    request.user = admin_user
    form_class = admin.site._registry[Workspace].get_form(request, owner.workspace, change=True)
    data = {k: v for k, v in model_to_dict(owner.workspace).items() if v is not None}
    data["organization"] = owner.organization.pk
    for value, valid in (
        ("https://shop.example,http://localhost:8080", True),
        ("https://shop.example/x", False),
    ):
        form = form_class({**data, "allowed_origins": value}, instance=owner.workspace)
        assert form.is_valid() is valid, form.errors
