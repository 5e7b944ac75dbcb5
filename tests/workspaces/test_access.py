"""The one tenant boundary (workspaces/access.py), for every route of the URLconf.

The routes are found by walking the URLconf, not listed by hand: a new
workspace-scoped route that does not derive from ``WorkspaceApi`` fails the
first test, and every route and method is checked for the order key (401) →
workspace (404) → scope (403).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from rest_framework.test import APIClient
from rest_framework.views import APIView

from tests.conftest import Tenant, api_client
from tests.factories import WorkspaceFactory
from tests.routes import api_views
from workspaces import services
from workspaces.access import WorkspaceApi
from workspaces.models import ApiKeyScope

pytestmark = pytest.mark.django_db

METHODS = ("get", "post", "put", "patch", "delete")
_CONVERTER = re.compile(r"<(?:(?P<kind>\w+):)?(?P<name>\w+)>")


@dataclass(frozen=True)
class Route:
    pattern: str
    view: type[APIView]

    @property
    def methods(self) -> list[str]:
        return [m for m in METHODS if hasattr(self.view, m)]

    def path(self, workspace_id: uuid.UUID) -> str:
        def fill(match: re.Match[str]) -> str:
            if match["name"] == "workspace_id":
                return str(workspace_id)
            return str(uuid.uuid4()) if match["kind"] == "uuid" else "someone"

        return "/" + _CONVERTER.sub(fill, self.pattern)


API_ROUTES = [Route(pattern, view) for pattern, view in api_views()]
WORKSPACE_ROUTES = [r for r in API_ROUTES if "<uuid:workspace_id>" in r.pattern]
CASES = [(route, method) for route in WORKSPACE_ROUTES for method in route.methods]


def _call(client: APIClient, method: str, path: str) -> Any:
    if method in ("post", "put", "patch"):
        return getattr(client, method)(path, {}, format="json")
    return getattr(client, method)(path)


def _code(response: Any) -> str:
    """The envelope's error code; the MCP route's errors carry it in the JSON-RPC error's ``data``."""
    body = response.json()
    return str(body["error"]["data"]["code"] if "jsonrpc" in body else body["error"]["code"])


def test_the_urlconf_has_workspace_routes_and_every_one_uses_the_helper() -> None:
    assert len(WORKSPACE_ROUTES) >= 12
    strays = [r.pattern for r in WORKSPACE_ROUTES if not issubclass(r.view, WorkspaceApi)]
    assert strays == []
    # And nothing else claims to be workspace-scoped without a workspace in its path.
    scoped = [r for r in API_ROUTES if issubclass(r.view, WorkspaceApi)]
    elsewhere = [r.pattern for r in scoped if r not in WORKSPACE_ROUTES]
    assert elsewhere == []


def test_admin_methods_name_real_handlers() -> None:
    for route in WORKSPACE_ROUTES:
        view = route.view
        assert issubclass(view, WorkspaceApi)
        assert {m.lower() for m in view.admin_methods} <= set(route.methods), route.pattern


@pytest.mark.parametrize(("route", "method"), CASES, ids=[f"{m.upper()} {r.pattern}" for r, m in CASES])
def test_key_then_workspace_then_scope(route: Route, method: str, owner: Tenant, outsider: Tenant) -> None:
    path = route.path(owner.workspace.id)
    # 1. No key, or a key that is not one: 401.
    assert _call(api_client(None), method, path).status_code == 401
    assert _call(api_client("dk_live_" + "x" * 40), method, path).status_code == 401
    # 2. Another organization's keys, whatever their scope: 404, never 403.
    for key in (outsider.admin_key, outsider.chat_key):
        response = _call(api_client(key), method, path)
        assert response.status_code == 404, (key[:12], response.content[:300])
        assert _code(response) == "not_found"
    # A key of the same organization limited to another workspace: 404 too.
    other = WorkspaceFactory.create(organization=owner.organization)
    limited = services.api_key_create(
        organization=owner.organization, name="limited", scope=ApiKeyScope.ADMIN, workspace_ids=[other.id]
    )
    assert _call(api_client(limited.plaintext), method, path).status_code == 404
    # 3. The owner's chat key: 403 exactly on the admin operations.
    response = _call(owner.client("chat"), method, path)
    assert issubclass(route.view, WorkspaceApi)
    if method.upper() in route.view.admin_methods:
        assert response.status_code == 403, response.content[:300]
        assert _code(response) == "forbidden"
    else:
        assert response.status_code != 403, response.content[:300]
