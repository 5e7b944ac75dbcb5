"""Answers about the subject asked, over documents that say the same of
several subjects: six appliance manuals with parallel sentences and a
claims policy, stored and ingested for real (parsing, chunking, the real
embedding model), asked through the chat API on the default (extractive)
engine.

A subject none of the documents covers is "the documents don't say", not a
form of the others; a manual's title line is never a cited part (nor,
through the output check, a heading a generative model cites); a follow-up
answers about the subject in focus only; and a streamed turn ends with the
reply the same turn gets without streaming."""

from __future__ import annotations

from typing import Any

import pytest

from chat.backends.scripted import ScriptedBackend
from chat.models import Message
from resources.ingestion import resource_ingest
from resources.services import Upload, resource_create
from tests.chat.appliances import QUESTION, appliance_manuals
from tests.chat.helpers import answer, chat_data, stream_events
from tests.conftest import Tenant
from workspaces.models import DEFAULT_ANSWERABILITY_THRESHOLD, Workspace

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

# (product, warranty, the control that resets it)
PRODUCTS = (
    ("Kettle K1", "two-year", "the lid button"),
    ("Toaster T2", "one-year", "the Cancel lever"),
    ("Mixer M5", "three-year", "the speed dial"),
    ("Grinder G3", "five-year", "the pulse switch"),
    ("Juicer J4", "six-month", "the power knob"),
    ("Blender B6", "four-year", "the start key"),
)

CLAIMS_POLICY = """# Claims policy

Inpatient claims must be filed within 30 days of discharge.
Outpatient claims must be filed within 90 days of the visit.
Claims are paid by bank transfer within ten working days of approval.
"""
SENIOR_MEMBERS = "For members aged 70 or over the deadline is 60 days after discharge."
OUTPATIENT = "Outpatient claims must be filed within 90 days of the visit."


def manual(name: str, warranty: str, control: str, heading: str = "{name} manual.") -> str:
    """A manual whose sentences say the same as the other products' (its
    reset sentence does not even name it: only the title line and the
    document's title do)."""
    return (
        f"{heading.format(name=name)}\n\n"
        f"The {name} comes with a {warranty} warranty from the date of purchase.\n\n"
        f"To reset it, hold {control} for five seconds until the light blinks.\n\n"
        f"Clean the {name} with a damp cloth after each use.\n"
    )


def upload(workspace: Workspace, title: str, text: str, filename: str = "manual.txt") -> None:
    """Store the text as an upload does and ingest it here (no worker)."""
    resource = resource_create(
        workspace=workspace, upload=Upload(data=text.encode(), title=title, filename=filename)
    ).resource
    assert resource_ingest(resource_id=resource.id) == "ready"


@pytest.fixture
def manuals(owner: Tenant) -> Tenant:
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.save()
    for name, warranty, control in PRODUCTS:
        upload(owner.workspace, name, manual(name, warranty, control), f"{name}.txt")
    return owner


@pytest.fixture
def claims(owner: Tenant) -> Tenant:
    upload(owner.workspace, "Claims policy", CLAIMS_POLICY, "claims-policy.md")
    upload(owner.workspace, "Senior members", SENIOR_MEMBERS)
    return owner


def chat(tenant: Tenant, **body: Any) -> dict[str, Any]:
    return chat_data(tenant, **body)


def streamed(tenant: Tenant, **body: Any) -> tuple[str, dict[str, Any]]:
    """The text of a streamed turn's deltas, and its final message."""
    events = stream_events(tenant, **body)
    return "".join(data["text"] for name, data in events if name == "delta"), events[-1][1]


def cited_titles(assistant: dict[str, Any]) -> set[str]:
    return {p["source"]["resource_title"] for p in assistant["response"]["parts"] if p["source"]}


def texts(assistant: dict[str, Any]) -> list[str]:
    return [p["text"] for p in assistant["response"]["parts"]]


@pytest.mark.parametrize(
    "question", ["How long is the dishwasher warranty?", "What is the warranty of the microwave?"]
)
def test_a_subject_no_document_covers_is_answered_that_the_documents_do_not_say(
    manuals: Tenant, question: str
) -> None:
    data = chat(manuals, message=question, include_prompt_trace=True)
    assistant = data["assistant_message"]
    assert assistant["response"]["type"] == "answer" and assistant["response"]["form"] is None
    assert assistant["grounding"] == "none"
    assert assistant["response"]["parts"] == [{"text": manuals.workspace.no_answer_text, "source": None}]
    assert data["prompt_trace"]["decision"] == "no_answer"


def test_the_form_tests_manuals_answer_a_dishwasher_question_that_they_do_not_say(owner: Tenant) -> None:
    """Over the seven manuals the form tests ask which one of (their warranty
    sentences name no product), a question about an eighth is no form."""
    appliance_manuals(owner)
    assistant = chat(owner, message="How long is the dishwasher warranty?")["assistant_message"]
    assert assistant["response"]["type"] == "answer" and assistant["grounding"] == "none"
    assert assistant["content"] == owner.workspace.no_answer_text
    assert chat(owner, message=QUESTION)["assistant_message"]["response"]["type"] == "form"


def test_a_question_that_names_no_subject_still_asks_which_one(manuals: Tenant) -> None:
    assistant = chat(manuals, message="How long is the warranty?")["assistant_message"]
    assert assistant["response"]["type"] == "form"
    [field] = assistant["response"]["form"]["fields"]
    assert len(field["options"]) >= 2 and set(field["options"]) <= {name for name, _, _ in PRODUCTS}


def test_a_generative_model_is_not_asked_about_a_subject_no_document_covers(
    manuals: Tenant, scripted: ScriptedBackend
) -> None:
    """The scripted backend stands in for the generative model (SmolLM2
    locally, vLLM in production): it must not be called."""
    assistant = chat(manuals, message="How long is the dishwasher warranty?")["assistant_message"]
    assert scripted.calls == []
    assert assistant["grounding"] == "none" and assistant["content"] == manuals.workspace.no_answer_text


@pytest.mark.parametrize(
    "question",
    [
        "Toaster T2 manual",
        "What is the Toaster T2?",
        "Tell me about the Toaster T2",
        "How do I clean the toaster?",
    ],
)
def test_a_title_line_is_never_a_cited_part(manuals: Tenant, question: str) -> None:
    assistant = chat(manuals, message=question)["assistant_message"]
    parts = assistant["response"]["parts"]
    assert assistant["grounding"] == "documents" and all(p["source"] for p in parts)
    assert not any(text.endswith("manual.") for text in texts(assistant))
    assert cited_titles(assistant) == {"Toaster T2"}


@pytest.mark.parametrize("heading", ["{name} manual.", "# {name} manual"])
def test_a_heading_a_generative_model_cites_loses_its_citation(
    owner: Tenant, scripted: ScriptedBackend, heading: str
) -> None:
    """The scripted backend stands in for the generative model: it cites the
    manual's title line (or its ``#`` heading) as a part of its answer."""
    upload(owner.workspace, "Toaster T2", manual("Toaster T2", "one-year", "the Cancel lever", heading))
    warranty = "The Toaster T2 comes with a one-year warranty from the date of purchase."
    scripted.replies = [answer(("Toaster T2 manual", 1), (warranty, 1))]
    assistant = chat(owner, message="How long is the toaster warranty?")["assistant_message"]
    heading_part, answer_part = assistant["response"]["parts"]
    assert heading_part == {"text": "Toaster T2 manual", "source": None}
    assert answer_part["text"] == warranty and answer_part["source"]["resource_title"] == "Toaster T2"
    stored = Message.objects.get(id=assistant["id"])
    assert stored.invalid_citations == [{"part": 0, "passage": 1, "reason": "heading"}]


@pytest.mark.parametrize(
    "first",
    ["How long is the toaster warranty?", "How do I clean the toaster?", "Tell me about the Toaster T2"],
)
def test_a_follow_up_answers_about_the_subject_in_focus_only(manuals: Tenant, first: str) -> None:
    asked = chat(manuals, message=first)
    assert cited_titles(asked["assistant_message"]) == {"Toaster T2"}
    follow_up = chat(manuals, message="How do I reset it?", session_id=asked["session"]["id"])
    assistant = follow_up["assistant_message"]
    assert cited_titles(assistant) == {"Toaster T2"}
    # First the reset sentence; the conversation's own subject (cleaning) may
    # follow from the same manual.
    assert (
        texts(assistant)[0] == "To reset it, hold the Cancel lever for five seconds until the light blinks."
    )


def test_a_question_naming_its_subject_is_answered_about_it_only(manuals: Tenant) -> None:
    """The other manuals' reset sentences are the same sentence, but only the
    toaster's manual is titled with the word asked."""
    assistant = chat(manuals, message="How do I reset the toaster?")["assistant_message"]
    assert cited_titles(assistant) == {"Toaster T2"}
    assert (
        texts(assistant)[0] == "To reset it, hold the Cancel lever for five seconds until the light blinks."
    )


def test_a_follow_up_that_names_its_own_subject_is_answered_about_it(claims: Tenant) -> None:
    """The quickstart's conversation: after two questions about inpatient
    claims, "When are outpatient claims due?" (a follow-up only because it
    is short) answers about outpatient claims, not with the inpatient and
    senior members' sentences the conversation brings."""
    first = chat(claims, message="How long do I have to file an inpatient claim?")
    assert (
        texts(first["assistant_message"])[0] == "Inpatient claims must be filed within 30 days of discharge."
    )
    session = first["session"]["id"]
    over_70 = chat(claims, message="And if I am over 70?", session_id=session)
    assert texts(over_70["assistant_message"]) == [SENIOR_MEMBERS]
    outpatient = chat(claims, message="When are outpatient claims due?", session_id=session)
    assert texts(outpatient["assistant_message"]) == [OUTPATIENT]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "question",
    [
        "How long is the toaster warranty?",
        "How do I reset the toaster?",
        "How long is the warranty?",
        "How long is the dishwasher warranty?",
        "When are outpatient claims due?",
    ],
)
def test_the_stream_ends_with_the_reply_the_same_turn_gets_without_streaming(
    manuals: Tenant, question: str
) -> None:
    upload(manuals.workspace, "Claims policy", CLAIMS_POLICY, "claims-policy.md")
    upload(manuals.workspace, "Senior members", SENIOR_MEMBERS)
    plain = chat(manuals, message=question)["assistant_message"]
    deltas, final = streamed(manuals, message=question)
    assert final["response"] == plain["response"] and final["content"] == plain["content"]
    assert final["grounding"] == plain["grounding"]
    # An answer's deltas are its parts; a form's, its question (its options,
    # numbered in its text, come with the final message).
    assert deltas == (final["content"] if final["response"]["type"] == "answer" else "Which one do you mean?")


@pytest.mark.django_db(transaction=True)
def test_a_streamed_follow_up_is_the_reply_the_same_conversation_gets_without_streaming(
    claims: Tenant,
) -> None:
    sessions = []
    for _ in range(2):
        first = chat(claims, message="How long do I have to file an inpatient claim?")
        chat(claims, message="And if I am over 70?", session_id=first["session"]["id"])
        sessions.append(first["session"]["id"])
    plain = chat(claims, message="When are outpatient claims due?", session_id=sessions[0])
    deltas, final = streamed(claims, message="When are outpatient claims due?", session_id=sessions[1])
    assert final["response"] == plain["assistant_message"]["response"]
    assert deltas == final["content"] == OUTPATIENT
