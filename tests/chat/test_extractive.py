"""The extractive engine (the embedded default), through the chat API with
the real embedding model and real retrieval: it answers with the passages'
own sentences, cites each, and says so plainly when nothing answers."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from chat.backends.extractive import NO_DOCUMENTS_TEXT, ExtractiveBackend
from chat.quantities import number_fit, question_numbers
from retrieval.models import Passage
from retrieval.search import ScoredPassage
from retrieval.units import split_sentences
from tests.chat.helpers import ingest_text, sse_events, stream_of
from tests.conftest import Tenant

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

GUIDELINE = (
    "Hypertension guideline for primary care.\n"
    "Adults under 65: aim for a blood pressure below 130/80 mmHg.\n"
    "Adults aged 65 to 70: aim for a systolic pressure below 140 mmHg.\n"
    "Patients over 70: a systolic target below 150 mmHg is acceptable, as tolerated.\n"
    "Recheck blood pressure four weeks after any change of medication."
)
OVER_70 = "Patients over 70: a systolic target below 150 mmHg is acceptable, as tolerated."


def chat(tenant: Tenant, **body: Any) -> Any:
    return tenant.client("admin").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/chat/",
        {"external_user_id": "u1", **body},
        format="json",
    )


def test_the_hypertension_question_gets_the_over_70_sentence_cited(owner: Tenant) -> None:
    resource = ingest_text(owner.workspace, "Hypertension guideline", GUIDELINE)
    response = chat(owner, message="What blood pressure target should I use for a 75 year old patient?")
    assert response.status_code == 200, response.json()
    assistant = response.json()["data"]["assistant_message"]
    assert assistant["model"] == "extractive" and assistant["degraded"] is False
    assert assistant["grounding"] == "documents"
    parts = assistant["response"]["parts"]
    assert parts[0]["text"] == OVER_70
    assert parts[0]["source"]["resource_id"] == str(resource.id)
    assert parts[0]["source"]["resource_title"] == "Hypertension guideline"
    assert assistant["content"] == " ".join(p["text"] for p in parts)


def test_every_part_is_a_sentence_of_a_retrieved_passage(owner: Tenant) -> None:
    ingest_text(owner.workspace, "Hypertension guideline", GUIDELINE)
    ingest_text(
        owner.workspace,
        "Claims",
        "Inpatient claims are filed within 30 days of discharge. Outpatient claims have 90 days.\n\n"
        "Claims are paid to the policyholder's account after review.",
    )
    for question in (
        "When should blood pressure be rechecked?",
        "How long do I have to file an inpatient claim?",
        "Who receives the payment of a claim?",
    ):
        data = chat(owner, message=question, include_prompt_trace=True).json()["data"]
        retrieved = {p["passage_id"] for p in data["prompt_trace"]["passages"]}
        for part in data["assistant_message"]["response"]["parts"]:
            assert part["source"] is not None, question
            assert part["source"]["passage_id"] in retrieved
            text = _passage_text(part["source"]["passage_id"])
            assert part["text"] in " ".join(text.split()), (question, part["text"])


def _passage_text(passage_id: str) -> str:
    return Passage.objects.get(id=passage_id).text


def test_a_greeting_gets_the_small_talk_reply_without_sources(owner: Tenant) -> None:
    ingest_text(owner.workspace, "Hypertension guideline", GUIDELINE)
    assistant = chat(owner, message="hello there!").json()["data"]["assistant_message"]
    assert assistant["response"]["parts"] == [{"text": owner.workspace.small_talk_text, "source": None}]
    assert assistant["grounding"] == "none"


def test_a_workspace_without_documents_gets_the_fixed_answer(owner: Tenant) -> None:
    assistant = chat(owner, message="What is the target?").json()["data"]["assistant_message"]
    assert assistant["grounding"] == "general_knowledge"
    assert assistant["response"]["parts"] == [{"text": NO_DOCUMENTS_TEXT, "source": None}]


def test_answers_are_deterministic(owner: Tenant) -> None:
    ingest_text(owner.workspace, "Hypertension guideline", GUIDELINE)
    question = "What is the blood pressure target for a 50 year old?"
    first = chat(owner, message=question).json()["data"]["assistant_message"]["response"]
    second = chat(owner, message=question).json()["data"]["assistant_message"]["response"]
    assert first == second
    assert first["parts"][0]["text"].startswith("Adults under 65")


@pytest.mark.django_db(transaction=True)
def test_the_stream_sends_the_parts_as_deltas(owner: Tenant) -> None:
    ingest_text(owner.workspace, "Hypertension guideline", GUIDELINE)
    response = owner.client("admin").post(
        f"/api/v1/workspaces/{owner.workspace.id}/chat/stream/",
        {"external_user_id": "u1", "message": "blood pressure target for a 75 year old?"},
        format="json",
    )
    events = list(sse_events(stream_of(response)))
    names = [name for name, _ in events]
    assert names[0] == "session" and names[-1] == "message" and "delta" in names
    final = events[-1][1]
    assert "".join(d["text"] for n, d in events if n == "delta") == final["content"]
    assert final["model"] == "extractive" and final["response"]["parts"][0]["text"] == OVER_70


def test_sentences_are_lines_and_sentence_ends_without_bullets() -> None:
    text = (
        "Title\n- First point, with words. Second one here.\n"
        "2) Third item is numbered.\ne.g. not a break here."
    )
    assert [s for _, s in split_sentences(text)] == [
        "First point, with words.",
        "Second one here.",
        "Third item is numbered.",
        "e.g. not a break here.",
    ]
    offsets = [o for o, _ in split_sentences(text)]
    assert all(text[o:].startswith(s) for o, (_, s) in zip(offsets, split_sentences(text), strict=True))


@pytest.mark.parametrize(
    ("question", "sentence", "fit"),
    [
        ("a 75 year old", "Patients over 70: target 150 mmHg.", 1),
        ("a 75 year old", "Adults under 65: below 130/80 mmHg.", -1),
        ("a 75 year old", "Adults aged 65 to 70: below 140 mmHg.", -1),
        ("a 68 year old", "Adults aged 65 to 70: below 140 mmHg.", 1),
        ("a 75 year old", "Aim for below 140 mmHg.", 0),  # a range of another unit says nothing
        ("how often", "Adults under 65: below 130/80 mmHg.", 0),  # no quantity in the question
        ("a 12 year old", "Children 12 years and older may take it.", 1),
    ],
)
def test_number_ranges(question: str, sentence: str, fit: int) -> None:
    assert number_fit(question_numbers(question), sentence) == fit


def test_the_engine_has_no_generation_interface() -> None:
    """The turn asks ``generative`` (typed: it narrows a ``Backend``) and calls
    ``answer``; the engine has no ``generate`` or ``stream`` that could be
    called by mistake."""
    engine = ExtractiveBackend("extractive")
    assert engine.generative is False
    assert not hasattr(engine, "generate")
    assert not hasattr(engine, "stream")


def test_overlapping_chunks_do_not_repeat_a_sentence() -> None:
    shared = "Inpatient claims are filed within 30 days of discharge."
    passages = [
        ScoredPassage(uuid.uuid4(), uuid.uuid4(), "A", f"Intro text here. {shared}", 0.9, 1, 0, None),
        ScoredPassage(
            uuid.uuid4(), uuid.uuid4(), "A", f"{shared} Outpatient claims take longer.", 0.8, 2, 1, None
        ),
    ]
    reply = ExtractiveBackend("extractive").answer(
        "When are inpatient claims filed?", passages, grounded=True
    )
    texts = [p["text"] for p in reply.response["parts"]]
    assert texts.count(shared) == 1
