"""Text PostgreSQL cannot store (NUL) or UTF-8 cannot encode (a lone
surrogate) is a 400 naming the field on every endpoint that parses its own
JSON, as DRF's CharField already makes it on the others (found by schema
fuzzing: the OpenAI endpoint answered 500)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chat.models import Session
from resources.models import Resource
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db

BAD = ["a\x00b", "\ud800", "x\udfff\x00"]


def _post(tenant: Tenant, path: str, body: Any, scope: str = "chat") -> Any:
    return tenant.client(scope).post(
        f"/api/v1/workspaces/{tenant.workspace.id}/{path}", json.dumps(body), content_type="application/json"
    )


@pytest.mark.parametrize("text", BAD)
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("as_part", [False, True])
def test_messages_on_the_openai_endpoint(owner: Tenant, text: str, stream: bool, as_part: bool) -> None:
    content: Any = [{"type": "text", "text": text}] if as_part else text
    body = {"model": "extractive", "messages": [{"role": "user", "content": content}], "user": "u1"}
    response = _post(owner, "openai/v1/chat/completions", {**body, "stream": stream})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["param"] == ("messages[0].content[0].text" if as_part else "messages[0].content")
    assert Session.objects.count() == 0


@pytest.mark.parametrize("text", BAD)
@pytest.mark.parametrize("path", ["chat/", "chat/stream/"])
def test_messages_on_native_chat(owner: Tenant, text: str, path: str) -> None:
    response = _post(owner, path, {"external_user_id": "u1", "messages": [{"role": "user", "content": text}]})
    assert response.status_code == 400
    assert "messages[0].content" in response.json()["error"]["fields"]
    assert Session.objects.count() == 0


@pytest.mark.parametrize("text", BAD)
@pytest.mark.parametrize("field", ["title", "text"])
def test_documents_of_a_bulk_upload(owner: Tenant, text: str, field: str) -> None:
    document = {"title": "Guide", "text": "Plain words.", field: text}
    response = _post(owner, "resources/batch/", [document], scope="admin")
    assert response.status_code == 400, response.content
    assert f"[0].{field}" in response.json()["error"]["fields"]
    assert Resource.objects.count() == 0


@pytest.mark.parametrize("value", [7, False, ["x"], {"a": 1}, "nope"])
def test_a_session_id_in_openai_metadata_must_be_a_uuid_string(owner: Tenant, value: Any) -> None:
    body = {"model": "extractive", "messages": [{"role": "user", "content": "hi"}], "user": "u1"}
    response = _post(owner, "openai/v1/chat/completions", {**body, "metadata": {"session_id": value}})
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "metadata.session_id"
