"""The OpenAPI schema documents what the API answers (tests/test_schema_fuzz.py
holds a live server to it; these pin what schema fuzzing found, one test per
fix) and stays valid."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from tests.conftest import Tenant

pytestmark = pytest.mark.django_db


def operations(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        operation["operationId"]: operation
        for path in schema["paths"].values()
        for operation in path.values()
        if isinstance(operation, dict) and "operationId" in operation
    }


def test_the_schema_validates_without_warnings(tmp_path: Path) -> None:
    call_command("spectacular", file=str(tmp_path / "schema.yaml"), validate=True, fail_on_warn=True)


def test_every_operation_documents_401_and_429_with_retry_after(schema: dict[str, Any]) -> None:
    """Found: every response without a key (or with a wrong one) was an undocumented 401."""
    for name, operation in operations(schema).items():
        responses = operation["responses"]
        assert {"401", "429"} <= responses.keys(), name
        assert responses["429"]["headers"]["Retry-After"]["required"] is True, name


def test_error_responses_are_the_envelope_and_the_openai_shape_on_its_endpoint(
    schema: dict[str, Any],
) -> None:
    """And the MCP server's errors are JSON-RPC errors (carrying the envelope's code)."""
    for name, operation in operations(schema).items():
        expected = "OpenAIError" if name.startswith("openai_") else "ErrorEnvelope"
        if name == "mcp":
            expected = "McpError"
        for status, response in operation["responses"].items():
            if int(status) >= 400 and status != "414":
                ref = response["content"]["application/json"]["schema"]["$ref"]
                assert ref == f"#/components/schemas/{expected}", (name, status)


@pytest.mark.parametrize(
    ("operation_id", "statuses"),
    [
        # A workspace-scoped read open to chat keys: no 403; a path id: 404.
        ("resources_get", {"401", "404", "429"}),
        # Admin only (403), a body (400, 413, 415), Idempotency-Key (409, 422).
        ("resources_create", {"400", "401", "403", "404", "409", "413", "415", "422", "429"}),
        # include_prompt_trace with a chat key is 403; generation can fail (502, 503).
        ("chat", {"400", "401", "403", "404", "409", "413", "415", "422", "429", "502", "503"}),
        ("workspaces_list", {"400", "401", "403", "414", "429"}),
        ("end_users_delete", {"400", "401", "403", "404", "414", "429"}),
        ("models_list", {"401", "429"}),
    ],
)
def test_each_operation_documents_the_errors_it_can_answer(
    schema: dict[str, Any], operation_id: str, statuses: set[str]
) -> None:
    responses = operations(schema)[operation_id]["responses"]
    assert {s for s in responses if int(s) >= 400} == statuses


def test_a_request_line_over_the_servers_limit_is_documented_as_its_html_414(schema: dict[str, Any]) -> None:
    """Found: a long cursor (valid: 512 characters, percent-encoded up to 12
    bytes each) made gunicorn answer 414 in HTML, documented nowhere."""
    response = operations(schema)["resources_passages"]["responses"]["414"]
    assert response["content"] == {"text/html": {"schema": {"type": "string"}}}
    assert "414" not in operations(schema)["resources_get"]["responses"]


def test_creating_posts_document_the_idempotency_key_header(schema: dict[str, Any]) -> None:
    found = operations(schema)
    for name in ("workspaces_create", "resources_create", "chat", "chat_stream", "feedback_upsert"):
        headers = [p["name"] for p in found[name].get("parameters", []) if p["in"] == "header"]
        assert headers == ["Idempotency-Key"], name
    assert not any(p["in"] == "header" for p in found["workspaces_search"].get("parameters", []))


def test_the_chat_body_needs_exactly_one_of_message_and_messages(schema: dict[str, Any]) -> None:
    """Found: generated bodies with both (or neither) were 400, never a turn."""
    body = schema["components"]["schemas"]["ChatInputRequest"]
    assert body["oneOf"] == [{"required": ["message"]}, {"required": ["messages"]}]


def test_the_stream_documents_one_event(schema: dict[str, Any]) -> None:
    """Found: the stream was documented as one string; a client validating
    events against it (schemathesis parses each event) failed on the first."""
    content = operations(schema)["chat_stream"]["responses"]["200"]["content"]
    event = content["text/event-stream"]["schema"]
    assert event["required"] == ["event", "data"]
    assert event["properties"]["event"]["enum"] == ["session", "prompt_trace", "delta", "message", "error"]
    completions = operations(schema)["openai_chat_completions"]["responses"]["200"]["content"]
    assert {"application/json", "text/event-stream"} <= completions.keys()


def test_an_unknown_path_under_the_openai_base_url_is_an_openai_error(owner: Tenant) -> None:
    """Found: a malformed workspace id in the OpenAI base URL matched no route
    and answered the native envelope, not the OpenAI error its clients parse."""
    response = owner.client().get("/api/v1/workspaces/not-a-uuid/openai/v1/models")
    assert response.status_code == 404
    assert response.json() == {
        "error": {"message": "Not found.", "type": "not_found_error", "code": "not_found", "param": None}
    }
    native = owner.client().get("/api/v1/workspaces/not-a-uuid/")
    assert native.json()["status"] == "error" and native.json()["error"]["code"] == "not_found"


def test_an_over_limit_body_to_the_openai_endpoint_is_an_openai_error(owner: Tenant) -> None:
    big = '{"model": "extractive", "user": "u", "messages": "' + "a" * (1_048_576 + 10) + '"}'
    response = owner.client().post(
        f"/api/v1/workspaces/{owner.workspace.id}/openai/v1/chat/completions",
        data=big,
        content_type="application/json",
    )
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["code"] == "payload_too_large" and error["type"] == "invalid_request_error"


@pytest.mark.parametrize(
    "operation_id",
    ["workspaces_list", "resources_list", "resources_passages", "sessions_list", "sessions_messages"],
)
def test_every_list_documents_its_page_parameters(schema: dict[str, Any], operation_id: str) -> None:
    """Found in review of the schema: three lists took ?cursor= and ?limit=
    (400 when out of range) without documenting them."""
    query = {
        p["name"]: p["schema"] for p in operations(schema)[operation_id]["parameters"] if p["in"] == "query"
    }
    assert query["limit"]["minimum"] == 1 and query["limit"]["maximum"] == 100
    assert query["cursor"]["type"] == "string"
