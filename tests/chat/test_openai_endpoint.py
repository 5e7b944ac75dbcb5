"""The OpenAI-compatible endpoint driven by the official ``openai`` SDK
against a live server process (tests/live_server.py), answering with the
real extractive engine over real retrieval: a cited answer, a stream that
ends, model listing, a continued session, and the error paths."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from chat.models import Session
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

CLAIMS = (
    "Inpatient claims are filed within 30 days of discharge.\n\n"
    "Outpatient claims are filed within 90 days of the visit.\n\n"
    "Claims are paid to the policyholder's account after review."
)


@pytest.fixture
def server(live_server_real: str, transactional_db: None) -> str:
    return live_server_real


def client(base: str, tenant: Tenant, key: str | None = None) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{base}/api/v1/workspaces/{tenant.workspace.id}/openai/v1",
        api_key=key or tenant.chat_key,
        max_retries=0,
        timeout=60,
    )


def test_a_completion_is_a_cited_answer_stored_in_the_end_users_session(server: str, owner: Tenant) -> None:
    resource = ingest_text(owner.workspace, "Claims policy", CLAIMS)
    completion = client(server, owner).chat.completions.create(
        model="extractive",
        messages=[{"role": "user", "content": "How long do I have to file an inpatient claim?"}],
        user="u1",
    )
    assert completion.object == "chat.completion"
    choice = completion.choices[0]
    assert choice.finish_reason == "stop" and choice.message.role == "assistant"
    content = choice.message.content
    assert content is not None
    assert content.startswith("Inpatient claims are filed within 30 days of discharge.")
    annotations = choice.message.annotations or []
    assert annotations and annotations[0].type == "url_citation"
    citation = annotations[0].url_citation
    assert citation.title == "Claims policy"
    assert content[citation.start_index : citation.end_index] == (
        "Inpatient claims are filed within 30 days of discharge."
    )
    assert f"/resources/{resource.id}/passages/" in citation.url
    extra = completion.model_extra["daneshyar"]  # type: ignore[index]
    assert extra["grounding"] == "documents" and extra["degraded"] is False
    assert extra["response"]["parts"][0]["source"]["resource_id"] == str(resource.id)
    assert len(extra["provenance"]["messages_hash"]) == 64
    # The session is the end user's, under the native API.
    native = owner.client("chat").get(
        f"/api/v1/workspaces/{owner.workspace.id}/sessions/", {"external_user_id": "u1"}
    )
    assert [s["id"] for s in native.json()["data"]["items"]] == [extra["session_id"]]


def test_a_stream_yields_chunks_and_ends(server: str, owner: Tenant) -> None:
    ingest_text(owner.workspace, "Claims policy", CLAIMS)
    stream = client(server, owner).chat.completions.create(
        model="extractive",
        messages=[{"role": "user", "content": "When are outpatient claims filed?"}],
        user="u2",
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith("Outpatient claims are filed within 90 days of the visit.")
    finished = [c for c in chunks if c.choices and c.choices[0].finish_reason == "stop"]
    assert len(finished) == 1
    extra = finished[0].model_extra["daneshyar"]  # type: ignore[index]
    assert Session.objects.get(id=extra["session_id"]).external_user_id == "u2"
    assert chunks[-1].usage is not None and chunks[-1].choices == []


def test_models_are_the_registry(server: str, owner: Tenant) -> None:
    models = client(server, owner).models.list()
    assert [m.id for m in models.data] == ["extractive", "smollm2-135m-instruct"]
    assert {m.object for m in models.data} == {"model"}


def test_a_session_continues_through_metadata(server: str, owner: Tenant) -> None:
    ingest_text(owner.workspace, "Claims policy", CLAIMS)
    sdk = client(server, owner)
    first = sdk.chat.completions.create(
        model="extractive", messages=[{"role": "user", "content": "Who gets paid?"}], user="u3"
    )
    session_id = first.model_extra["daneshyar"]["session_id"]  # type: ignore[index]
    second = sdk.chat.completions.create(
        model="extractive",
        messages=[
            {"role": "user", "content": "Who gets paid?"},
            {"role": "assistant", "content": first.choices[0].message.content},
            {"role": "user", "content": "And when are inpatient claims filed?"},
        ],
        user="u3",
        metadata={"session_id": session_id},
    )
    assert second.model_extra["daneshyar"]["session_id"] == session_id  # type: ignore[index]
    assert Session.objects.get(id=session_id).message_count == 4


def test_the_x_api_key_header_works_too(server: str, owner: Tenant) -> None:
    sdk = openai.OpenAI(
        base_url=f"{server}/api/v1/workspaces/{owner.workspace.id}/openai/v1",
        api_key="unused",
        default_headers={"X-API-Key": owner.chat_key},
        max_retries=0,
    )
    assert next(m.id for m in sdk.models.list().data) == "extractive"


def test_error_paths_in_openai_shape(server: str, owner: Tenant, outsider: Tenant) -> None:
    sdk = client(server, owner)
    question: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Hello?"}]
    with pytest.raises(openai.AuthenticationError) as bad_key:
        client(server, owner, key="dk_live_" + "x" * 40).models.list()
    assert bad_key.value.status_code == 401 and bad_key.value.code == "unauthenticated"
    with pytest.raises(openai.NotFoundError) as foreign:
        client(server, owner, key=outsider.admin_key).chat.completions.create(
            model="extractive",
            messages=question,
            user="u1",
        )
    assert foreign.value.code == "not_found"
    cases: list[tuple[dict[str, Any], str]] = [
        ({"model": "gpt-4o"}, "model"),
        ({"n": 2}, "n"),
        ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]}, "tools"),
        ({"user": None}, "user"),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "What is this?"},
                            {"type": "image_url", "image_url": {"url": "http://example.org/x.png"}},
                        ],
                    }
                ]
            },
            "messages[0].content[1].type",
        ),
        ({"messages": [{"role": "assistant", "content": "Hi"}]}, "messages[0].role"),
        ({"messages": []}, "messages"),
    ]
    for change, param in cases:
        arguments: dict[str, Any] = {"model": "extractive", "messages": question, "user": "u1", **change}
        arguments = {k: v for k, v in arguments.items() if v is not None}
        with pytest.raises(openai.BadRequestError) as error:
            sdk.chat.completions.create(**arguments)
        assert error.value.status_code == 400, change
        body = error.value.body
        assert isinstance(body, dict) and body["param"] == param, (change, body)
        assert body["type"] == "invalid_request_error" and body["code"] == "validation_error"
    assert not Session.objects.exists()


def test_the_sdk_sends_filters_with_extra_body(server: str, owner: Tenant) -> None:
    """``filters`` is an extension field: the SDK sends it with ``extra_body``,
    and it confines the completion's retrieval like the native chat's."""
    inpatient = ingest_text(
        owner.workspace, "Inpatient", "Inpatient claims are filed within 30 days of discharge."
    )
    outpatient = ingest_text(
        owner.workspace, "Outpatient", "Outpatient claims are filed within 90 days of the visit."
    )
    for resource, kind in [(inpatient, "inpatient"), (outpatient, "outpatient")]:
        resource.metadata = {"kind": kind, "year": 2026}
        resource.save(update_fields=["metadata"])
    sdk = client(server, owner)

    def ask(filters: Any) -> Any:
        return sdk.chat.completions.create(
            model="extractive",
            messages=[{"role": "user", "content": "How long do I have to file a claim?"}],
            user="u1",
            extra_body={"filters": filters},
        )

    outpatient_2026 = {
        "type": "and",
        "filters": [
            {"type": "eq", "key": "kind", "value": "outpatient"},
            {"type": "gte", "key": "year", "value": 2026},
        ],
    }
    found = ask(outpatient_2026).model_extra["daneshyar"]
    sources = {p["source"]["resource_id"] for p in found["response"]["parts"] if p["source"]}
    assert found["grounding"] == "documents" and sources == {str(outpatient.id)}
    nothing = ask({"type": "eq", "key": "kind", "value": "dental"})
    assert nothing.choices[0].message.content == owner.workspace.no_answer_text
    assert not nothing.choices[0].message.annotations
    assert nothing.model_extra["daneshyar"]["grounding"] == "none"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError) as error:
        ask({"type": "or", "filters": [{"type": "eq", "key": "kind", "value": "x"}, {"type": "like"}]})
    body = error.value.body
    assert isinstance(body, dict) and body["param"] == "filters.filters[1].type"
