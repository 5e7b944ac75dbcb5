"""The route x key matrix, generated from the URLconf.

For every API route and method, every key class that must be refused gets
its expected status — no key, a bad key, a revoked key, another
organization's admin key, a chat key on an admin operation, a key limited to
another workspace, and (for reads scoped to an end user) another
``external_user_id`` — and every end-user token class its outcome: a valid
token of the workspace (accepted on the end-user routes, 401 elsewhere), a
token of another end user (404 on the first one's data), a token of another
organization's workspace (401 ``token_invalid``) and an expired one (401) —
and no response ever carries a byte of a foreign object (its id, title or
content). Actors that narrow who may read what (retrieval/filters.py) are in
it too: an end-user token carrying groups (carol's, on her own data) on every
route, and a ``chat`` key sending ``groups`` and ``filters`` on search, chat,
the stream and the completions; neither ever sees a byte of the workspace's
document open only to a group they lack. The table must name every route and
method of the URLconf: a new route without its row fails the first test.

Generation is the extractive engine (the embedded default): the valid
token's chat turns run it.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass
from typing import Any

import jwt
import pytest
from rest_framework.views import APIView

from chat.models import Session
from resources.models import Source
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant, api_client, make_tenant, token_client
from tests.factories import WorkspaceFactory
from tests.responses import response_body
from tests.routes import api_views
from tests.transcripts.factories import conversation, feedback
from workspaces import services, tokens
from workspaces.access import WorkspaceApi
from workspaces.authentication import accepts_end_user_tokens
from workspaces.models import ApiKeyScope

pytestmark = pytest.mark.django_db

METHODS = ("get", "post", "put", "patch", "delete")
_CONVERTER = re.compile(r"<(?:(?P<kind>\w+):)?(?P<name>\w+)>")

# Expected status per key class. Omitted classes do not apply to the route:
# "chat" only where the chat scope is refused, "other_user" only where the
# route reads or writes one end user's data.
# "token*": end-user tokens (Authorization: Bearer); "token" is alice's, of
# the owner's workspace; "token_other_user" is bob's. Routes that do not take
# tokens answer 401 to every one of them.
# "token_groups" is carol's, carrying groups.
TOKENS_REFUSED = {"token": 401, "token_groups": 401, "token_foreign": 401, "token_expired": 401}
NO_KEY = {"none": 401, "bad": 401, "revoked": 401, **TOKENS_REFUSED}
WORKSPACE = {**NO_KEY, "foreign": 404, "limited": 404}
ADMIN = {**WORKSPACE, "chat": 403}


def end_user(ok: int, *, mine_only: bool = True) -> dict[str, int]:
    """An end-user route: ``ok`` for alice's token; another user's data is 404."""
    row = {**WORKSPACE, "token": ok, "token_groups": ok, "token_foreign": 401, "token_expired": 401}
    if mine_only:
        row |= {"other_user": 404, "token_other_user": 404}
    return row


W = "api/v1/workspaces/<uuid:workspace_id>/"
TABLE: dict[tuple[str, str], dict[str, int]] = {
    ("GET", "api/v1/workspaces/"): {**NO_KEY, "chat": 403},
    ("POST", "api/v1/workspaces/"): {**NO_KEY, "chat": 403, "limited": 403},
    ("GET", W): ADMIN,
    ("PATCH", W): ADMIN,
    ("DELETE", W): ADMIN,
    # Names no workspace: any workspace's valid token lists the models.
    ("GET", "api/v1/models/"): {**NO_KEY, "token": 200, "token_groups": 200, "token_foreign": 200},
    ("GET", "api/v1/certificates/keys"): NO_KEY,
    ("POST", "api/v1/certificates/verify"): NO_KEY,
    ("POST", W + "end-user-tokens/"): ADMIN,
    ("POST", W + "signing-secret/"): ADMIN,
    ("GET", W + "resources/"): WORKSPACE,
    ("POST", W + "resources/"): ADMIN,
    ("POST", W + "resources/batch/"): ADMIN,
    ("GET", W + "resources/<uuid:resource_id>/"): WORKSPACE,
    ("PATCH", W + "resources/<uuid:resource_id>/"): ADMIN,
    ("DELETE", W + "resources/<uuid:resource_id>/"): ADMIN,
    ("POST", W + "resources/<uuid:resource_id>/reingest/"): ADMIN,
    ("GET", W + "resources/<uuid:resource_id>/passages/"): WORKSPACE,
    ("POST", W + "sync/"): ADMIN,
    ("POST", W + "sync/delete/"): ADMIN,
    ("GET", W + "sources/"): ADMIN,
    ("POST", W + "sources/"): ADMIN,
    ("GET", W + "sources/<uuid:source_id>/"): ADMIN,
    ("PATCH", W + "sources/<uuid:source_id>/"): ADMIN,
    ("DELETE", W + "sources/<uuid:source_id>/"): ADMIN,
    ("POST", W + "sources/<uuid:source_id>/sync/"): ADMIN,
    ("GET", W + "sources/<uuid:source_id>/runs/"): ADMIN,
    ("POST", W + "search/"): {**WORKSPACE, "key_access": 200},
    ("POST", W + "chat/"): {**end_user(200), "key_access": 200},
    ("POST", W + "chat/stream/"): {**end_user(200), "key_access": 200},
    ("GET", W + "guard-rules/"): ADMIN,
    ("PUT", W + "guard-rules/"): ADMIN,
    ("GET", W + "sessions/"): end_user(200, mine_only=False),
    ("GET", W + "sessions/<uuid:session_id>/"): end_user(200),
    ("PATCH", W + "sessions/<uuid:session_id>/"): end_user(200),
    ("DELETE", W + "sessions/<uuid:session_id>/"): end_user(204),
    ("GET", W + "sessions/<uuid:session_id>/messages/"): end_user(200),
    ("GET", W + "sessions/<uuid:session_id>/messages/<uuid:message_id>/sources/"): end_user(200),
    ("POST", W + "sessions/<uuid:session_id>/messages/<uuid:message_id>/feedback/"): end_user(200),
    ("GET", W + "openai/v1/models"): end_user(200, mine_only=False),
    ("POST", W + "openai/v1/chat/completions"): {**end_user(200), "key_access": 200},
    # The MCP server: a tools/call of search (its refusals are JSON-RPC errors with the same statuses).
    ("POST", W + "mcp/"): {**end_user(200, mine_only=False), "key_access": 200},
    ("GET", W + "transcripts/"): ADMIN,
    ("DELETE", W + "end-users/<path:external_user_id>/"): ADMIN,
    ("GET", W + "webhooks/"): ADMIN,
    ("POST", W + "webhooks/"): ADMIN,
    ("GET", W + "webhooks/<uuid:webhook_id>/"): ADMIN,
    ("PATCH", W + "webhooks/<uuid:webhook_id>/"): ADMIN,
    ("DELETE", W + "webhooks/<uuid:webhook_id>/"): ADMIN,
    ("POST", W + "webhooks/<uuid:webhook_id>/rotate-secret/"): ADMIN,
    ("GET", W + "webhooks/<uuid:webhook_id>/deliveries/"): ADMIN,
    ("POST", W + "webhooks/<uuid:webhook_id>/deliveries/<uuid:delivery_id>/redeliver/"): ADMIN,
    ("GET", W + "test-sets/"): ADMIN,
    ("POST", W + "test-sets/"): ADMIN,
    ("GET", W + "test-sets/<uuid:test_set_id>/"): ADMIN,
    ("PATCH", W + "test-sets/<uuid:test_set_id>/"): ADMIN,
    ("DELETE", W + "test-sets/<uuid:test_set_id>/"): ADMIN,
    ("GET", W + "test-sets/<uuid:test_set_id>/items/"): ADMIN,
    ("POST", W + "test-sets/<uuid:test_set_id>/items/"): ADMIN,
    ("PATCH", W + "test-sets/<uuid:test_set_id>/items/<uuid:item_id>/"): ADMIN,
    ("DELETE", W + "test-sets/<uuid:test_set_id>/items/<uuid:item_id>/"): ADMIN,
    ("POST", W + "test-sets/<uuid:test_set_id>/import/"): ADMIN,
    ("GET", W + "test-sets/<uuid:test_set_id>/export/"): ADMIN,
    ("GET", W + "evaluations/"): ADMIN,
    ("POST", W + "evaluations/"): ADMIN,
    ("GET", W + "evaluations/<uuid:run_id>/"): ADMIN,
    ("GET", W + "evaluations/<uuid:run_id>/items/"): ADMIN,
    ("GET", W + "evaluations/<uuid:run_id>/compare/<uuid:other_id>/"): ADMIN,
}
# Routes added by other parts of the API register here too (see below).
OPTIONAL_ROWS: dict[tuple[str, str], dict[str, int]] = {}


@dataclass(frozen=True)
class Route:
    pattern: str
    view: type[APIView]


ROUTES = [Route(pattern, view) for pattern, view in api_views()]
CELLS = sorted(
    (method.upper(), route.pattern) for route in ROUTES for method in METHODS if hasattr(route.view, method)
)


def _row(cell: tuple[str, str]) -> dict[str, int]:
    return TABLE.get(cell) or OPTIONAL_ROWS[cell]


def test_every_route_and_method_has_its_row() -> None:
    missing = [cell for cell in CELLS if cell not in TABLE and cell not in OPTIONAL_ROWS]
    stale = [cell for cell in TABLE if cell not in CELLS]
    assert missing == [] and stale == []
    size = sum(len(_row(cell)) for cell in CELLS)
    print(f"\nroute x key matrix: {len(CELLS)} routes/methods x key classes = {size} cells")


@dataclass
class World:
    owner: Tenant
    foreign: Tenant
    ids: dict[str, str]
    foreign_bytes: list[str]
    keys: dict[str, str | None]
    # The ids a key class uses instead of ``ids`` (its own end user's data).
    ids_of: dict[str, dict[str, str]]
    # Bytes of the owner's document open only to a group no narrowed actor holds.
    unreadable_bytes: list[str]


def _world() -> World:
    owner, foreign = make_tenant("Owner"), make_tenant("Foreign")
    own_resource = ingest_text(owner.workspace, "Owner policy", "Owner text about claims.")
    own_resource.metadata = {"topic": "claims"}
    own_resource.save(update_fields=["metadata"])
    board_marker = uuid.uuid4().hex
    board = ingest_text(owner.workspace, f"Board {board_marker}", f"Board text about claims {board_marker}.")
    board.metadata = {"topic": "claims"}
    board.access = {"groups": ["board"]}
    board.save(update_fields=["metadata", "access"])
    session, messages = conversation(owner.workspace, external_user_id="alice", title="Alice asks")
    feedback(messages[1])
    carol_session, carol_messages = conversation(
        owner.workspace, external_user_id="carol", title="Carol asks"
    )
    feedback(carol_messages[1])
    marker = uuid.uuid4().hex
    foreign_resource = ingest_text(foreign.workspace, f"Foreign {marker}", f"Foreign secret {marker}.")
    foreign_session, foreign_messages = conversation(
        foreign.workspace, external_user_id="alice", title=f"Foreign chat {marker}"
    )
    own_source, foreign_source = (
        Source.objects.create(workspace=tenant.workspace, kind="page", urls=["http://example.com/"])
        for tenant in (owner, foreign)
    )
    revoked = services.api_key_create(organization=owner.organization, name="old", scope=ApiKeyScope.ADMIN)
    services.api_key_revoke(api_key=revoked.api_key)
    other = WorkspaceFactory.create(organization=owner.organization)
    limited = services.api_key_create(
        organization=owner.organization, name="limited", scope=ApiKeyScope.ADMIN, workspace_ids=[other.id]
    )
    secret = tokens.signing_secret_rotate(workspace=owner.workspace, grace_seconds=0)
    ids = {
        "workspace_id": str(owner.workspace.id),
        "resource_id": str(own_resource.id),
        "source_id": str(own_source.id),
        "session_id": str(session.id),
        "message_id": str(messages[1].id),
        "external_user_id": "alice",
    }
    return World(
        owner=owner,
        foreign=foreign,
        ids=ids,
        foreign_bytes=[
            marker,
            str(foreign.workspace.id),
            str(foreign_resource.id),
            str(foreign_session.id),
            str(foreign_messages[0].id),
            str(foreign_source.id),
        ],
        keys={
            "none": None,
            "bad": "dk_live_" + "x" * 43,
            "revoked": revoked.plaintext,
            "foreign": foreign.admin_key,
            "chat": owner.chat_key,
            "limited": limited.plaintext,
            "other_user": owner.chat_key,
            "token": _token(owner, "alice"),
            "token_groups": _token(owner, "carol", groups=["staff"]),
            "key_access": owner.chat_key,
            "token_other_user": _token(owner, "bob"),
            "token_foreign": _token(foreign, "alice"),
            "token_expired": _expired_token(owner, secret, "alice"),
        },
        ids_of={
            "token_groups": {
                **ids,
                "session_id": str(carol_session.id),
                "message_id": str(carol_messages[1].id),
                "external_user_id": "carol",
            }
        },
        unreadable_bytes=[board_marker, str(board.id)],
    )


def _token(tenant: Tenant, user: str, groups: list[str] | None = None) -> str:
    return tokens.end_user_token_mint(workspace=tenant.workspace, external_user_id=user, groups=groups).token


# What the key_access class adds to the body of search, chat, the stream and
# the completions (an extension field there): the end user's groups and a filter.
ACCESS_FIELDS = {"groups": ["staff"], "filters": {"type": "eq", "key": "topic", "value": "claims"}}
# The key classes whose reads are narrowed to documents open to all or to "staff".
NARROWED = ("token", "token_groups", "token_other_user", "key_access")


def _expired_token(tenant: Tenant, secret: str, user: str) -> str:
    """Minted offline (as an integrator's server would), an hour ago, for 15 minutes."""
    claims = {"wid": str(tenant.workspace.id), "sub": user, "scope": "chat", "jti": uuid.uuid4().hex}
    now = int(time.time())
    return jwt.encode({**claims, "iat": now - 3600, "exp": now - 2700}, secret, algorithm="HS256")


def _path(pattern: str, ids: dict[str, str]) -> str:
    return "/" + _CONVERTER.sub(lambda m: ids.get(m["name"], str(uuid.uuid4())), pattern)


def _body(method: str, pattern: str, user: str) -> Any:
    if pattern.endswith("mcp/"):
        return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": MCP_SEARCH}
    if pattern.endswith("resources/batch/"):
        return [{"title": "t", "text": "some text"}]
    if pattern.endswith("chat/completions"):
        return {"model": "extractive", "messages": [{"role": "user", "content": "hi"}], "user": user}
    if pattern.endswith("webhooks/") or pattern.endswith("webhooks/<uuid:webhook_id>/"):
        return {"url": "http://127.0.0.1:9/hooks"}
    if pattern.endswith("guard-rules/"):
        return {"rules": []}
    if pattern.endswith("/sources/") or pattern.endswith("sources/<uuid:source_id>/"):
        return {"kind": "page", "urls": ["http://example.com/"]}
    if pattern.endswith("sources/<uuid:source_id>/sync/"):
        return {}
    if pattern.endswith("sync/"):
        return {"documents": [{"external_id": "wiki/1", "version": "1"}], "complete": True}
    if pattern.endswith("sync/delete/"):
        return {"external_ids": ["wiki/1"]}
    if pattern.endswith("resources/"):
        return {"title": "t", "text": "some text"}
    if pattern.endswith("resources/<uuid:resource_id>/"):
        return {"metadata": {"topic": "claims"}}
    if pattern.endswith("feedback/"):
        return {"external_user_id": user, "rating": "up"}
    if pattern.endswith("search/"):
        return {"query": "claims"}
    if pattern.endswith("verify"):
        return {"certificate": {}}
    if pattern.endswith("sessions/<uuid:session_id>/"):
        return {"title": "renamed"}
    if pattern == "api/v1/workspaces/":
        return {"name": "new"}
    if pattern == W:
        return {"name": "renamed"}
    return {"external_user_id": user, "message": "hi", "session_id": None}


# The MCP route's call: the search tool, its arguments where key_access adds its fields.
MCP_SEARCH: dict[str, Any] = {"name": "search", "arguments": {"query": "claims"}}
# The transport answers only a client that accepts both of its response types.
MCP_ACCEPT = "application/json, text/event-stream"


def _client(key: str | None) -> Any:
    # An end-user token is a JWT (its header starts "eyJ"); keys are dk_live_….
    return token_client(key) if key is not None and key.startswith("eyJ") else api_client(key)


def _call(
    key: str | None,
    method: str,
    pattern: str,
    ids: dict[str, str],
    user: str,
    extra: dict[str, Any] | None = None,
) -> Any:
    client = _client(key)
    path = _path(pattern, ids)
    query = (
        {"external_user_id": user} if method in ("GET", "PATCH", "DELETE") and "sessions/" in pattern else {}
    )
    if method in ("POST", "PUT", "PATCH"):
        body = _body(method, pattern, user)
        if "chat/" in pattern and "session_id" in body:
            body["session_id"] = ids["session_id"] if user != "alice" else None
        if pattern.endswith("chat/completions") and user != "alice":
            body["metadata"] = {"session_id": ids["session_id"]}
        if extra and pattern.endswith("mcp/"):
            body["params"] = {**MCP_SEARCH, "arguments": {**MCP_SEARCH["arguments"], **extra}}
        elif extra:
            body.update(extra)
        if query:
            path += f"?external_user_id={user}"
        headers = {"HTTP_ACCEPT": MCP_ACCEPT} if pattern.endswith("mcp/") else {}
        return getattr(client, method.lower())(path, body, format="json", **headers)
    if method == "DELETE":
        return client.delete(path + (f"?external_user_id={user}" if query else ""))
    return client.get(path, query)


def _body_text(response: Any) -> str:
    return response_body(response).decode(errors="replace")


@pytest.mark.django_db(transaction=True)
def test_every_cell_is_refused_as_expected_and_leaks_nothing() -> None:
    world = _world()
    # Not vacuous: a key sending no groups finds the document the narrowed classes may not read.
    unnarrowed = _call(world.owner.chat_key, "POST", W + "search/", world.ids, "alice")
    assert all(b in _body_text(unnarrowed) for b in world.unreadable_bytes)
    failures: list[str] = []
    # Deletions last: the valid token deletes alice's session.
    for method, pattern in sorted(CELLS, key=lambda cell: cell[0] == "DELETE"):
        for key_class, expected in _row((method, pattern)).items():
            user = {"other_user": "bob", "token_other_user": "bob", "token_groups": "carol"}.get(
                key_class, "alice"
            )
            ids = world.ids_of.get(key_class, world.ids)
            extra = ACCESS_FIELDS if key_class == "key_access" else None
            response = _call(world.keys[key_class], method, pattern, ids, user, extra)
            text = _body_text(response)
            if response.status_code != expected:
                failures.append(f"{method} {pattern} [{key_class}]: {response.status_code} != {expected}")
            if key_class in NARROWED:
                shown = [b for b in world.unreadable_bytes if b in text]
                if shown:
                    failures.append(
                        f"{method} {pattern} [{key_class}]: bytes of a document it may not read {shown}"
                    )
            leaked = [b for b in world.foreign_bytes if b in text]
            if leaked:
                failures.append(f"{method} {pattern} [{key_class}]: foreign bytes {leaked}")
    assert failures == []


@pytest.mark.django_db(transaction=True)
def test_foreign_objects_inside_an_own_workspace_are_404_and_never_shown() -> None:
    """Own keys, own workspace, but the other organization's resource,
    session and message ids in the path."""
    world = _world()
    foreign_session = Session.objects.get(workspace=world.foreign.workspace)
    foreign_message = foreign_session.messages.order_by("sequence").last()
    assert foreign_message is not None
    ids = {
        **world.ids,
        "resource_id": world.foreign_bytes[2],
        "source_id": world.foreign_bytes[5],
        "session_id": str(foreign_session.id),
        "message_id": str(foreign_message.id),
    }
    failures: list[str] = []
    views = {route.pattern: route.view for route in ROUTES}
    for method, pattern in CELLS:
        if not any(name in pattern for name in ("resource_id", "source_id", "session_id", "message_id")):
            continue
        view = views[pattern]
        admin_only = issubclass(view, WorkspaceApi) and method in view.admin_methods
        keys = [world.owner.admin_key] if admin_only else [world.owner.admin_key, world.owner.chat_key]
        token = world.keys["token"]
        if accepts_end_user_tokens(view) and token is not None:
            keys.append(token)
        for key in keys:
            response = _call(key, method, pattern, ids, "alice")
            text = _body_text(response)
            if response.status_code != 404:
                failures.append(f"{method} {pattern}: {response.status_code}")
            if any(b in text for b in world.foreign_bytes):
                failures.append(f"{method} {pattern}: foreign bytes")
    assert failures == []


def test_workspace_scoped_routes_are_the_ones_using_the_boundary() -> None:
    for route in ROUTES:
        assert ("<uuid:workspace_id>" in route.pattern) == issubclass(route.view, WorkspaceApi), route.pattern
