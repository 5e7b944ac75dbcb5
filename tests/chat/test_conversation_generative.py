"""Conversations on a generative backend: a follow-up is made standalone by
one short rewrite call before retrieval (skipped for a standalone question,
and the conversation still decides when it fails), and the server-side
"the documents don't say" check applies before the model is called.

The scripted backend stands in for the generative model (SmolLM2 locally,
vLLM in production); retrieval, scoring and storage are real."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from chat.backends import Generation
from chat.backends.scripted import ScriptedBackend
from chat.services.turn import followup_search
from chat.services.turn.rewrite import REWRITE_INSTRUCTIONS
from daneshyar.exceptions import LLMUnavailable
from retrieval.search import search
from tests.chat.helpers import answer, chat_data
from tests.conftest import Tenant

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

FOLLOW_UP = [
    {"role": "user", "content": "When should I start a statin for an adult with diabetes?"},
    {"role": "assistant", "content": "Between 40 and 75, a moderate-intensity statin."},
    {"role": "user", "content": "And for patients over 75?"},
]


def chat(tenant: Tenant, **body: Any) -> dict[str, Any]:
    return chat_data(tenant, include_prompt_trace=True, **body)


def test_a_follow_up_is_rewritten_once_and_the_rewrite_is_searched(
    clinic: Tenant, scripted: ScriptedBackend
) -> None:
    scripted.rewrites = ["When should a patient with diabetes over 75 start a statin?"]
    scripted.replies = [answer(("Discuss benefits and risks first.", 1))]
    data = chat(clinic, messages=FOLLOW_UP)
    [call] = scripted.rewrite_calls
    assert call[0]["content"] == REWRITE_INSTRUCTIONS
    assert "When should I start a statin" in call[1]["content"]
    assert call[1]["content"].endswith("Last question: And for patients over 75?")
    assert data["prompt_trace"]["retrieval_queries"][-1] == (
        "When should a patient with diabetes over 75 start a statin?"
    )
    # The model was given the statin guideline's passage about patients over 75 first.
    first = data["prompt_trace"]["passages"][0]
    assert first["resource_id"] == data["assistant_message"]["response"]["parts"][0]["source"]["resource_id"]
    assert data["assistant_message"]["response"]["parts"][0]["source"]["resource_title"] == "Statins"


def test_the_rewrite_runs_while_the_other_queries_are_searched(
    clinic: Tenant, scripted: ScriptedBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model's rewrite call (here held until the question and the
    conversation query have been searched, or 5 s) does not delay them: a
    follow-up waits for the longest of the call and those searches."""
    searched = threading.Event()
    calls: list[str] = []

    def counted_search(**kwargs: Any) -> Any:
        found = search(**kwargs)
        calls.append(kwargs["query"])
        if len(calls) == 2:
            searched.set()
        return found

    seen: list[bool] = []

    def held_rewrite(messages: Any, **kwargs: Any) -> Generation:
        seen.append(searched.wait(timeout=5))
        return Generation(text=json.dumps({"question": "When should a patient over 75 start a statin?"}))

    monkeypatch.setattr(followup_search, "search", counted_search)
    monkeypatch.setattr(scripted, "rewrite", held_rewrite)
    scripted.replies = [answer(("Discuss benefits and risks first.", 1))]
    data = chat(clinic, messages=FOLLOW_UP)
    assert seen == [True]
    assert len(calls) == 3 and calls[2] == "When should a patient over 75 start a statin?"
    assert data["prompt_trace"]["retrieval_queries"] == calls
    assert data["assistant_message"]["response"]["parts"][0]["source"]["resource_title"] == "Statins"


def test_a_failed_rewrite_falls_back_to_the_conversation(clinic: Tenant, scripted: ScriptedBackend) -> None:
    scripted.rewrites = [LLMUnavailable("The generation server timed out.")]
    scripted.replies = [answer(("Discuss benefits and risks first.", 1))]
    data = chat(clinic, messages=FOLLOW_UP)
    queries = data["prompt_trace"]["retrieval_queries"]
    assert len(queries) == 2 and queries[1].startswith("And for patients over 75? When should I start")
    assert data["assistant_message"]["response"]["parts"][0]["source"]["resource_title"] == "Statins"


def test_a_standalone_question_is_not_rewritten(clinic: Tenant, scripted: ScriptedBackend) -> None:
    scripted.rewrites = ["unused"]
    scripted.replies = [answer(("Below 130/80 mmHg.", 1))]
    chat(clinic, message="What blood pressure should adults with diabetes aim for?")
    assert scripted.rewrite_calls == []


def test_the_documents_do_not_say_without_calling_the_model(
    clinic: Tenant, scripted: ScriptedBackend
) -> None:
    data = chat(clinic, message="What is the capital of France?")
    assert scripted.calls == []
    assistant = data["assistant_message"]
    assert assistant["grounding"] == "none" and assistant["content"] == clinic.workspace.no_answer_text
    assert data["prompt_trace"]["decision"] == "no_answer"


def test_the_model_is_told_how_to_say_the_documents_do_not_say_and_to_ask_back(
    clinic: Tenant, scripted: ScriptedBackend
) -> None:
    scripted.replies = [answer(("Below 130/80 mmHg.", 1))]
    data = chat(clinic, message="What blood pressure should adults with diabetes aim for?")
    system = data["prompt_trace"]["messages"][0]["content"]
    assert "When the reference passages do not answer the question" in system
    assert "further clarification is needed" in system
