"""A no answer or a form says why: the prompt trace's ``reason`` (a code of
``chat.contract.DecisionReason``) with the figures that decided it, one test
per code, over small documents ingested with the real embedding model and
asked through the chat API on the extractive engine (docs/api.md)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from chat.contract import DecisionReason
from chat.message_list import Conversation
from chat.models import Grounding, Message
from chat.services.turn import TurnRequest, clarify, turn_prepare
from languages import ENGLISH
from tests.chat.helpers import chat_data, ingest_text, stream_events
from tests.conftest import Tenant
from workspaces.models import DEFAULT_ANSWERABILITY_THRESHOLD, ApiKey, ApiKeyScope

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

PRODUCTS = (("Kettle K1", "two-year"), ("Toaster T2", "one-year"), ("Mixer M5", "three-year"))


@pytest.fixture
def manuals(owner: Tenant) -> Tenant:
    """Three manuals whose warranty sentences say the same of their own product."""
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.save()
    for name, warranty in PRODUCTS:
        ingest_text(
            owner.workspace,
            name,
            f"The {name} comes with a {warranty} warranty from the date of purchase.\n\n"
            f"Clean the {name} with a damp cloth after each use.",
        )
    return owner


def trace(tenant: Tenant, **body: Any) -> dict[str, Any]:
    data = chat_data(tenant, include_prompt_trace=True, **body)
    prompt_trace: dict[str, Any] = data["prompt_trace"]
    prompt_trace["response_type"] = data["assistant_message"]["response"]["type"]
    # The stored reply keeps the same reason and figures (the transcript's, an evaluation's).
    stored = Message.objects.get(id=data["assistant_message"]["id"])
    assert stored.reason == prompt_trace["reason"]
    assert stored.reason_figures == (prompt_trace["figures"] if stored.reason else None)
    return prompt_trace


def test_an_answer_has_no_reason(manuals: Tenant) -> None:
    found = trace(manuals, message="How long is the Kettle K1 warranty?")
    assert found["decision"] == "answer"
    assert found["reason"] is None and found["figures"] == {}


def test_below_the_threshold_gives_the_score_and_the_threshold(manuals: Tenant) -> None:
    found = trace(manuals, message="What is the capital of France?")
    assert found["decision"] == "no_answer" and found["reason"] == DecisionReason.BELOW_THRESHOLD
    figures = found["figures"]
    assert figures == {"answerability": found["answerability"], "threshold": DEFAULT_ANSWERABILITY_THRESHOLD}
    assert figures["answerability"] < figures["threshold"]


def test_a_subject_no_document_covers_names_its_words(manuals: Tenant) -> None:
    found = trace(manuals, message="How long is the dishwasher warranty?")
    assert found["decision"] == "no_answer" and found["reason"] == DecisionReason.UNCOVERED_SUBJECT
    figures = found["figures"]
    assert figures["subject_words"] == ["dishwasher"]
    assert figures["candidates"] >= 2 and len(figures["scores"]) == figures["candidates"]
    # Above the threshold: the subject decided, not the score.
    assert figures["answerability"] >= figures["threshold"] == DEFAULT_ANSWERABILITY_THRESHOLD


def test_parallel_candidates_give_their_count_and_scores(manuals: Tenant) -> None:
    found = trace(manuals, message="How long is the warranty?")
    assert found["response_type"] == "form"
    assert found["decision"] == "clarify" and found["reason"] == DecisionReason.PARALLEL_CANDIDATES
    figures = found["figures"]
    assert figures["candidates"] == len(PRODUCTS) == len(figures["scores"])
    assert figures["margin"] == clarify.AMBIGUITY_MARGIN and figures["overlap"] == clarify.PARALLEL_OVERLAP
    assert max(figures["scores"]) == pytest.approx(figures["answerability"])


@pytest.mark.django_db(transaction=True)
def test_a_streamed_trace_has_the_reason(manuals: Tenant) -> None:
    events = stream_events(manuals, message="How long is the warranty?", include_prompt_trace=True)
    [streamed] = [data for name, data in events if name == "prompt_trace"]
    assert streamed["reason"] == DecisionReason.PARALLEL_CANDIDATES and streamed["figures"]["candidates"] == 3


def test_an_unresolved_reference_names_the_phrase(owner: Tenant) -> None:
    ingest_text(owner.workspace, "Deer", "Deer grow new antlers every year and shed them in winter.")
    ingest_text(owner.workspace, "Moose", "Moose have the largest antlers of any deer.")
    found = trace(owner, message="Does this animal have antlers?")
    assert found["decision"] == "clarify" and found["reason"] == DecisionReason.UNRESOLVED_REFERENCE
    figures = found["figures"]
    assert figures["reference"] == "this animal" and figures["floor"] == clarify.REFERENCE_FLOOR
    assert figures["candidates"] == 2 and min(figures["scores"]) >= clarify.REFERENCE_FLOOR


def test_filters_that_leave_nothing_are_filtered_out(manuals: Tenant) -> None:
    nothing = {"type": "eq", "key": "dept", "value": "oncology"}
    found = trace(manuals, message="How long is the warranty?", filters=nothing)
    assert found["decision"] == "no_answer" and found["reason"] == DecisionReason.FILTERED_OUT
    assert found["figures"] == {"passages": 0} and found["passages"] == []


def test_a_workspace_without_documents_has_no_documents(owner: Tenant) -> None:
    """With filters a turn is about the documents even when there are none."""
    found = trace(owner, message="How long is the warranty?", filters={"type": "eq", "key": "a", "value": 1})
    assert found["decision"] == "no_answer" and found["reason"] == DecisionReason.NO_DOCUMENTS
    assert found["figures"] == {"passages": 0}


def test_an_answer_the_extractive_engine_finds_no_sentence_for_is_no_sentence(manuals: Tenant) -> None:
    """The decision let the turn answer; a stored reply that says the
    documents don't (grounding none) is the engine's: ``no_sentence``."""
    workspace = manuals.workspace
    prepared = turn_prepare(
        TurnRequest(
            principal=ApiKey(organization=manuals.organization, name="t", scope=ApiKeyScope.ADMIN),
            workspace=workspace,
            external_user_id="u1",
            conversation=Conversation.single("How long is the Kettle K1 warranty?"),
        )
    )
    assert prepared.reason() == (None, {})
    declined = Message(id=uuid.uuid4(), grounding=Grounding.NONE)
    reason, figures = prepared.reason(Grounding.NONE)
    assert reason == DecisionReason.NO_SENTENCE
    assert figures == {
        "answerability": prepared.decision.answerability,
        "threshold": DEFAULT_ANSWERABILITY_THRESHOLD,
    }
    assert prepared.trace(declined)["reason"] == "no_sentence"


def test_the_reason_follows_the_rule_that_asked() -> None:
    deer = clarify.Candidate(uuid.uuid4(), "Deer", 0.25, "Deer grow antlers every year.")
    moose = clarify.Candidate(uuid.uuid4(), "Moose", 0.22, "Moose have the largest antlers of any deer.")
    pointed = clarify.ask_reason("Does this animal have antlers?", [], [deer, moose], ENGLISH)
    assert pointed == (
        DecisionReason.UNRESOLVED_REFERENCE,
        {"reference": "this animal", "floor": clarify.REFERENCE_FLOOR},
    )
    parallel = clarify.ask_reason("How long is the warranty?", [], [deer, moose], ENGLISH)
    assert parallel[0] == DecisionReason.PARALLEL_CANDIDATES
