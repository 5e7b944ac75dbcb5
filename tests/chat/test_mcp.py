"""The workspace's MCP server driven by the official ``mcp`` client over real
HTTP against a live server process (tests/live_server.py): every tool with
an admin key, a chat key and an end-user token; the token's groups and
resources that a call cannot widen; errors in the protocol's shape with the
REST envelope's codes."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from chat.models import Message, Session
from resources.models import Resource
from tests.chat.helpers import ingest_text
from tests.chat.mcp_client import (
    bearer_headers,
    key_headers,
    mcp_call,
    mcp_error,
    mcp_session,
    mcp_tool_error,
    mcp_url,
)
from tests.conftest import Tenant
from workspaces import tokens
from workspaces.models import Workspace

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

CLAIMS = (
    "Inpatient claims are filed within 30 days of discharge.\n\n"
    "Outpatient claims are filed within 90 days of the visit.\n\n"
    "Claims are paid to the policyholder's account after review."
)
SALARIES = "Salary bands are reviewed every April by the board.\n\nBonuses are paid in December."


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


@pytest.fixture
def server(live_server_real: str, transactional_db: None) -> str:
    return live_server_real


@pytest.fixture
def documents(owner: Tenant) -> tuple[Resource, Resource]:
    """An open claims policy (metadata kind=policy) and a salaries memo only the group ``hr`` reads."""
    claims = ingest_text(owner.workspace, "Claims policy", CLAIMS)
    salaries = ingest_text(owner.workspace, "Salaries memo", SALARIES)
    Resource.objects.filter(id=claims.id).update(metadata={"kind": "policy"})
    Resource.objects.filter(id=salaries.id).update(metadata={"kind": "memo"}, access={"groups": ["hr"]})
    return claims, salaries


def _token(workspace: Workspace, **claims: Any) -> dict[str, str]:
    return bearer_headers(
        tokens.end_user_token_mint(workspace=workspace, external_user_id="u1", **claims).token
    )


def _callers(owner: Tenant) -> dict[str, dict[str, str]]:
    return {
        "admin": key_headers(owner.admin_key),
        "chat": key_headers(owner.chat_key),
        "token": _token(owner.workspace, groups=["hr"]),
    }


def test_the_tools_are_listed_with_strict_documented_schemas(server: str, owner: Tenant) -> None:
    async def work(client: Any) -> Any:
        return (await client.list_tools()).tools

    tools = mcp_session(mcp_url(server, owner.workspace.id), key_headers(owner.chat_key), work)
    assert {t.name for t in tools} == {"search", "answer", "list_documents", "read_passage"}
    for tool in tools:
        assert tool.description and tool.input_schema["additionalProperties"] is False
        assert all(
            spec.get("description") or spec.get("type") for spec in tool.input_schema["properties"].values()
        )


@pytest.mark.parametrize("kind", ["admin", "chat", "token"])
def test_every_key_kind_searches_lists_and_reads(
    server: str, owner: Tenant, documents: tuple[Resource, Resource], kind: str
) -> None:
    claims, _ = documents
    url, headers = mcp_url(server, owner.workspace.id), _callers(owner)[kind]
    found = mcp_call(url, headers, "search", {"query": "When are inpatient claims filed?", "top_k": 3})
    best = found["items"][0]
    assert best["title"] == "Claims policy" and best["resource_id"] == str(claims.id)
    assert best["text"].startswith("Inpatient claims") and best["page"] is None
    assert best["metadata"] == {"kind": "policy"} and best["score"] > 0 and best["rank"] == 1
    listed = mcp_call(url, headers, "list_documents", {"limit": 1})
    assert len(listed["items"]) == 1 and listed["next_cursor"]
    rest = mcp_call(url, headers, "list_documents", {"cursor": listed["next_cursor"]})
    assert [d["title"] for d in listed["items"] + rest["items"]] == ["Claims policy", "Salaries memo"]
    read = mcp_call(url, headers, "read_passage", {"passage_id": found["items"][0]["passage_id"]})
    assert read["passage"]["ordinal"] == 0 and read["before"] == []
    assert [p["text"] for p in read["after"]] == ["Outpatient claims are filed within 90 days of the visit."]


@pytest.mark.parametrize("kind", ["admin", "chat", "token"])
def test_every_key_kind_gets_a_cited_answer_and_continues_its_session(
    server: str, owner: Tenant, documents: tuple[Resource, Resource], kind: str
) -> None:
    claims, _ = documents
    url, headers = mcp_url(server, owner.workspace.id), _callers(owner)[kind]
    user = {} if kind == "token" else {"external_user_id": "u1"}
    first = mcp_call(url, headers, "answer", {"message": "When are inpatient claims filed?", **user})
    reply = first["assistant_message"]
    assert reply["grounding"] == "documents" and first["session"]["created"] is True
    part = reply["response"]["parts"][0]
    assert part["text"].startswith("Inpatient claims") and part["source"]["resource_id"] == str(claims.id)
    session_id = first["session"]["id"]
    second = mcp_call(
        url,
        headers,
        "answer",
        {"message": "And outpatient claims?", "session_id": session_id, "certificate": True, **user},
    )
    assert second["session"] == {"id": session_id, "title": first["session"]["title"], "created": False}
    certificate = second["assistant_message"]["certificate"]
    assert certificate["payload"] and certificate["signature"]


def test_a_tokens_groups_and_resources_apply_and_cannot_be_widened(
    server: str, owner: Tenant, documents: tuple[Resource, Resource]
) -> None:
    claims, salaries = documents
    url = mcp_url(server, owner.workspace.id)
    outside = _token(owner.workspace)  # no groups: the open documents only
    found = mcp_call(url, outside, "search", {"query": "When are salary bands reviewed?", "top_k": 10})
    assert {i["resource_id"] for i in found["items"]} == {str(claims.id)}
    listed = mcp_call(url, outside, "list_documents", {})
    assert [d["id"] for d in listed["items"]] == [str(claims.id)]
    hr = mcp_call(url, _token(owner.workspace, groups=["hr"]), "search", {"query": "salary bands"})
    hidden = next(i["passage_id"] for i in hr["items"] if i["resource_id"] == str(salaries.id))
    error = mcp_tool_error(url, outside, "read_passage", {"passage_id": hidden})
    assert error["code"] == "not_found" and error["status"] == 404
    widened = mcp_tool_error(url, outside, "search", {"query": "salary", "groups": ["hr"]})
    assert widened["code"] == "validation_error" and "groups" in widened["fields"]
    only_salaries = _token(owner.workspace, groups=["hr"], resource_ids=[salaries.id])
    found = mcp_call(url, only_salaries, "search", {"query": "inpatient claims", "top_k": 10})
    assert {i["resource_id"] for i in found["items"]} == {str(salaries.id)}
    # A key that names the end user's groups is held to them, as on /search/.
    keyed = mcp_call(url, key_headers(owner.chat_key), "list_documents", {"groups": ["sales"]})
    assert [d["id"] for d in keyed["items"]] == [str(claims.id)]
    nothing = mcp_call(
        url,
        key_headers(owner.chat_key),
        "search",
        {"query": "claims", "filters": {"type": "eq", "key": "kind", "value": "x"}},
    )
    assert nothing["items"] == []


def test_refusals_carry_the_rest_codes(server: str, owner: Tenant, outsider: Tenant) -> None:
    url = mcp_url(server, owner.workspace.id)
    chat = key_headers(owner.chat_key)
    assert mcp_error(url, key_headers("dk_live_" + "x" * 40), "search", {"query": "a"}).data["code"] == (
        "unauthenticated"
    )
    assert (
        mcp_error(url, key_headers(outsider.admin_key), "search", {"query": "a"}).data["code"] == "not_found"
    )
    expired = _token(owner.workspace, ttl_seconds=-3600)
    assert mcp_error(url, expired, "search", {"query": "a"}).data["code"] == "token_expired"
    other = _token(outsider.workspace)
    assert mcp_error(url, other, "search", {"query": "a"}).data["code"] == "token_invalid"
    unknown = mcp_error(url, chat, "delete_everything", {})
    assert unknown.data["code"] == "not_found" and unknown.code == -32602
    # A tool's own failures are tool execution errors (isError), for the model
    # to read and correct itself by, as the protocol (2025-11-25) says.
    invalid = mcp_tool_error(url, chat, "search", {"query": "a", "top_k": 500, "extra": 1})
    assert invalid["code"] == "validation_error" and set(invalid["fields"]) == {"top_k", "extra"}
    assert invalid["message"] == "The request has invalid fields." and invalid["status"] == 400
    huge = mcp_tool_error(url, chat, "search", {"query": "a" * 5000})
    assert huge["code"] == "validation_error" and "query" in huge["fields"]
    other_user = mcp_tool_error(
        url, _token(owner.workspace), "answer", {"message": "hi", "external_user_id": "u2"}
    )
    assert other_user["code"] == "forbidden" and other_user["status"] == 403


def test_a_chat_rate_limit_is_a_tool_error_with_its_wait(
    server: str, owner: Tenant, documents: tuple[Resource, Resource]
) -> None:
    Workspace.objects.filter(id=owner.workspace.id).update(rate_chat_per_minute=1)
    url, chat = mcp_url(server, owner.workspace.id), key_headers(owner.chat_key)
    mcp_call(url, chat, "answer", {"message": "When are claims paid?", "external_user_id": "u9"})
    asked = {"message": "When are claims paid?", "external_user_id": "u9"}
    error = mcp_tool_error(url, chat, "answer", asked)
    assert error["code"] == "rate_limited" and error["retry_after"] >= 1 and error["status"] == 429
    assert error["message"].startswith("Over the limit of 1 per minute")


def test_an_oversized_or_malformed_body_is_a_jsonrpc_error_not_a_500(server: str, owner: Tenant) -> None:
    url = mcp_url(server, owner.workspace.id)
    headers = {**key_headers(owner.chat_key), "Accept": "application/json, text/event-stream"}
    huge = httpx.post(url, headers=headers, content=b"[" + b"1," * 2_000_000 + b"1]", timeout=60)
    assert huge.status_code == 413
    assert huge.json()["error"]["data"]["code"] == "payload_too_large" and huge.json()["jsonrpc"] == "2.0"
    for body in (b"{not json", b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": 5}', b"[]"):
        response = httpx.post(
            url, headers={**headers, "Content-Type": "application/json"}, content=body, timeout=60
        )
        assert 400 <= response.status_code < 500, (body, response.status_code, response.text)
        assert response.json()["error"]["data"]["code"] == "validation_error", response.text
    # The SDK's own errors carry the envelope's code too: a method it does not have.
    unknown = httpx.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 2, "method": "resources/list"})
    assert unknown.json()["error"]["code"] == -32601, unknown.text
    assert unknown.json()["error"]["data"] == {
        "code": "not_found",
        "message": "Method not found: resources/list",
        "status": 404,
    }
    # Found by schema fuzzing: the transport's own refusals were plain text.
    for refused in ({"Content-Type": "text/plain"}, {"Accept": "text/html"}):
        response = httpx.post(url, headers={**headers, **refused}, content=b"{}", timeout=60)
        assert 400 <= response.status_code < 500 and response.json()["error"]["data"]["code"], response.text
    # A client opening the server's event stream, as the TypeScript SDK does
    # after its handshake, is told there is none (405, which it expects), not 406.
    for method in ("GET", "DELETE"):
        stream = httpx.request(method, url, headers={**headers, "Accept": "text/event-stream"}, timeout=60)
        assert stream.status_code == 405 and "POST" in stream.headers["allow"], (method, stream.text)
        assert stream.json()["error"]["data"]["code"] == "method_not_allowed"
    # Stateless: no session is opened, so a client opening many holds nothing here.
    opened = httpx.post(url, headers=headers, json=INITIALIZE, timeout=60)
    assert opened.status_code == 200 and "mcp-session-id" not in opened.headers, opened.text
    missing = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=60)
    assert missing.status_code == 401 and missing.json()["error"]["data"]["code"] == "unauthenticated"


def test_a_web_page_calls_only_from_an_allowed_origin_with_a_token(server: str, owner: Tenant) -> None:
    """The transport's rule against DNS rebinding (a present ``Origin`` the
    server does not allow: 403), with the widget's rule for which pages may
    call: the workspace's ``allowed_origins``, an end-user token, never a key."""
    Workspace.objects.filter(id=owner.workspace.id).update(allowed_origins=["https://shop.example"])
    url = mcp_url(server, owner.workspace.id)
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream"}
    token = _token(owner.workspace)
    for headers in (
        {**token, "Origin": "https://evil.example"},
        {**key_headers(owner.chat_key), "Origin": "https://shop.example"},
    ):
        refused = httpx.post(url, headers={**accept, **headers}, json=listing, timeout=60)
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["data"]["code"] == "forbidden" and refused.json()["jsonrpc"] == "2.0"
    allowed = httpx.post(url, headers={**accept, **token, "Origin": "https://shop.example"}, json=listing)
    assert (
        allowed.status_code == 200
        and allowed.headers["access-control-allow-origin"] == "https://shop.example"
    )
    assert "search" in {t["name"] for t in allowed.json()["result"]["tools"]}


def test_an_idempotency_key_replays_an_answer_and_refuses_another_body(
    server: str, owner: Tenant, documents: tuple[Resource, Resource]
) -> None:
    """As on ``POST …/chat/``: a retry with the same key and body gets the
    stored reply (one session, one turn stored), another body with the key
    a 422 in the protocol's shape; a request that failed is not replayed."""
    url = mcp_url(server, owner.workspace.id)
    headers = {
        **key_headers(owner.chat_key),
        "Accept": "application/json, text/event-stream",
        "Idempotency-Key": "retry-1",
    }
    call: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": "answer",
            "arguments": {"external_user_id": "u9", "message": "When are claims filed?"},
        },
    }
    first = httpx.post(url, headers=headers, json=call, timeout=60)
    again = httpx.post(url, headers=headers, json=call, timeout=60)
    assert first.status_code == again.status_code == 200, first.text
    assert again.headers.get("idempotent-replayed") == "true"
    assert again.json() == first.json()
    session = first.json()["result"]["structuredContent"]["session"]["id"]
    assert Session.objects.filter(external_user_id="u9").count() == 1
    assert Message.objects.filter(session_id=session).count() == 2

    other = {
        **call,
        "params": {"name": "answer", "arguments": {"external_user_id": "u9", "message": "Other?"}},
    }
    reused = httpx.post(url, headers=headers, json=other, timeout=60)
    assert reused.status_code == 422 and reused.json()["error"]["data"]["code"] == "idempotency_key_reused"

    refused = {**call, "params": {"name": "answer", "arguments": {"message": "no end user"}}}
    failed = httpx.post(url, headers={**headers, "Idempotency-Key": "retry-2"}, json=refused, timeout=60)
    retried = httpx.post(url, headers={**headers, "Idempotency-Key": "retry-2"}, json=refused, timeout=60)
    assert failed.json()["result"]["isError"] and retried.json()["result"]["isError"]
    assert "idempotent-replayed" not in retried.headers
