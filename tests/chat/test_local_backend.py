"""The embedded backend for real: SmolLM2-135M (GGUF) + xgrammar. Slow."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from chat.backends import get_backend, local_model_path, use_backend
from chat.backends.base import Generation
from chat.backends.local import LocalBackend
from chat.models import Message
from chat.output import output_schema
from tests.conftest import Tenant
from tests.worker import wait_for

DOCUMENT = """The Daneshyar clinic is open from 8 am to 6 pm on weekdays.

Inpatient claims must be filed within 30 days of discharge."""


@pytest.fixture(scope="module")
def local() -> Iterator[LocalBackend]:
    # Generous timeout: the test machine is shared and slow; the point is the pipeline.
    backend = LocalBackend(
        "smollm2-135m-instruct", model_path=local_model_path(), max_new_tokens=80, timeout=600
    )
    backend.load()
    yield backend


def test_registry_serves_the_default_model_with_the_local_backend(settings: object) -> None:
    backend = get_backend("smollm2-135m-instruct")
    assert isinstance(backend, LocalBackend)
    assert backend.model_path == local_model_path()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_local_model_answers_over_a_document_with_schema_valid_json(
    owner: Tenant, local: LocalBackend, celery_worker: object
) -> None:
    """The whole pipeline: upload through the API, ingestion by a real Celery
    worker on the real broker, retrieval, the real local model, storage."""
    jsonschema = pytest.importorskip("jsonschema")
    upload = owner.client("admin").post(
        f"/api/v1/workspaces/{owner.workspace.id}/resources/",
        {"title": "Clinic", "text": DOCUMENT},
        format="json",
    )
    assert upload.status_code == 202, upload.json()
    assert wait_for(upload.json()["data"]["id"]).status == "ready"
    calls: list[Generation] = []
    original = local.generate

    def recording_generate(*args: object, **kwargs: object) -> Generation:
        generation = original(*args, **kwargs)  # type: ignore[arg-type]
        calls.append(generation)
        return generation

    local.generate = recording_generate  # type: ignore[method-assign]
    try:
        with use_backend(local):
            response = owner.client("admin").post(
                f"/api/v1/workspaces/{owner.workspace.id}/chat/",
                {
                    "external_user_id": "u",
                    "message": "When is the clinic open?",
                    "include_prompt_trace": True,
                },
                format="json",
            )
    finally:
        del local.generate
    assert response.status_code == 200, response.json()
    assistant = response.json()["data"]["assistant_message"]
    stored = Message.objects.get(id=assistant["id"])
    assert calls, "the model ran"
    jsonschema.validate(json.loads(calls[0].text), output_schema())
    assert stored.is_fallback is False
    assert assistant["grounding"] == "documents"
    assert assistant["content"]
    assert stored.prompt_tokens and stored.prompt_tokens > 50
    assert stored.completion_tokens and 0 < stored.completion_tokens <= 80
    for part in assistant["response"]["parts"]:
        assert part["source"] is None or part["source"]["resource_title"] == "Clinic"


@pytest.mark.slow
def test_local_stream_yields_deltas_then_the_generation(local: LocalBackend) -> None:
    messages = [
        {"role": "system", "content": "Reply in JSON."},
        {"role": "user", "content": "Say hello."},
    ]
    items = list(local.stream(messages, schema=output_schema(), max_tokens=40))  # type: ignore[arg-type]
    final = items[-1]
    assert isinstance(final, Generation)
    deltas = items[:-1]
    assert deltas and all(isinstance(d, str) for d in deltas)
    assert "".join(deltas) == final.text  # type: ignore[arg-type]
    assert final.text.startswith('{"type":')


def test_a_busy_local_model_is_llm_unavailable_after_the_timeout() -> None:
    from types import SimpleNamespace

    from chat.backends.local import _Runtime
    from daneshyar.exceptions import LLMUnavailable

    backend = LocalBackend("m", model_path=local_model_path(), timeout=0.2)
    compiler = SimpleNamespace(compile_json_schema=lambda *a, **k: object())
    backend._runtime = _Runtime(None, None, None, compiler, frozenset())
    backend._generate_lock.acquire()  # another request is generating
    try:
        started = time.monotonic()
        with pytest.raises(LLMUnavailable, match="busy"):
            backend.generate([{"role": "user", "content": "hi"}], schema=output_schema())
        assert time.monotonic() - started < 2
    finally:
        backend._generate_lock.release()


def test_schema_bounds_fit_the_token_budget() -> None:
    small = LocalBackend.fit_schema(output_schema(), 80)
    answer = small["anyOf"][0]["properties"]
    assert answer["parts"]["maxItems"] == 1
    assert answer["parts"]["items"]["properties"]["text"]["maxLength"] == 160
    assert "maxLength" not in answer["type"]  # enums stay as they are
    large = LocalBackend.fit_schema(output_schema(), 256)
    assert large["anyOf"][0]["properties"]["parts"]["maxItems"] == 4
    assert output_schema()["anyOf"][0]["properties"]["parts"]["maxItems"] == 12  # input untouched


def test_oldest_history_turns_are_dropped_to_fit_the_context() -> None:
    from types import SimpleNamespace

    import torch

    from chat.backends.local import _Runtime
    from daneshyar.exceptions import LLMUnavailable

    def template(messages: list[dict[str, str]], **kwargs: object) -> dict[str, torch.Tensor]:
        return {"input_ids": torch.zeros((1, sum(len(m["content"]) for m in messages)))}

    model = SimpleNamespace(config=SimpleNamespace(max_position_embeddings=100))
    runtime = _Runtime(SimpleNamespace(apply_chat_template=template), model, None, None, frozenset())
    backend = LocalBackend("m", model_path=local_model_path())
    messages: list[Any] = [
        {"role": "system", "content": "s" * 10},
        {"role": "user", "content": "old" * 10},
        {"role": "assistant", "content": "a" * 10},
        {"role": "user", "content": "new" * 5},
        {"role": "assistant", "content": "b" * 5},
        {"role": "user", "content": "q" * 20},
    ]
    ids = backend._encode(runtime, messages, limit=50)  # 10 + 15 + 5 + 20 = 50 fits; with turn 1 it does not
    assert ids.shape[1] == 50
    with pytest.raises(LLMUnavailable, match="too long"):
        backend._encode(runtime, [messages[0], {"role": "user", "content": "q" * 95}], limit=50)
