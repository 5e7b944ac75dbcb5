"""What a question names decides between asking which one and "the
documents don't say" (chat/services/turn/naming.py): two drug leaflets whose
dose sentences say the same of their own drug, ingested with the real
embedding model and asked through the chat API on the extractive engine.

"The maximum daily dose" names no subject (``maximum`` says which of the
dose's values is asked: the language's ``qualifiers``), so the unqualified
question is asked back; "… of ibuprofen" names a drug one leaflet covers;
"… of aspirin" names one that neither covers."""

from __future__ import annotations

from typing import Any

import pytest

from chat.contract import DecisionReason
from tests.chat.helpers import chat_data, ingest_text
from tests.conftest import Tenant
from workspaces.models import DEFAULT_ANSWERABILITY_THRESHOLD

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

# Parallel dose sentences, neither of which writes "maximum".
PARALLEL = (
    "The daily dose of paracetamol for adults is at most 4 g.",
    "The daily dose of ibuprofen for adults is at most 1,200 mg.",
)
# Worded differently: only the ibuprofen leaflet's says "maximum".
WORDED_APART = (
    "Adults may take at most 4 g of paracetamol a day.",
    "The maximum daily dose of ibuprofen for adults is 1,200 mg.",
)
UNQUALIFIED = "What is the maximum daily dose for adults?"


def leaflets(tenant: Tenant, paracetamol: str, ibuprofen: str) -> Tenant:
    tenant.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    tenant.workspace.save()
    drugs = (("Paracetamol", paracetamol, "fever"), ("Ibuprofen", ibuprofen, "inflammation"))
    for drug, dose, effect in drugs:
        ingest_text(
            tenant.workspace,
            f"{drug} leaflet",
            f"{drug} relieves pain and {effect}.\n\n{dose}\n\nStore below 25 degrees.",
        )
    return tenant


@pytest.fixture
def parallel(owner: Tenant) -> Tenant:
    return leaflets(owner, *PARALLEL)


def ask(tenant: Tenant, message: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The reply and the prompt trace of one turn."""
    data = chat_data(tenant, message=message, include_prompt_trace=True)
    return data["assistant_message"], data["prompt_trace"]


def cited_titles(assistant: dict[str, Any]) -> set[str]:
    return {p["source"]["resource_title"] for p in assistant["response"]["parts"] if p["source"]}


def test_an_unqualified_question_over_parallel_leaflets_asks_which_one(parallel: Tenant) -> None:
    """Both leaflets answer alike, and "maximum" (in neither) names no drug:
    which one, not "the documents don't say"."""
    assistant, trace = ask(parallel, UNQUALIFIED)
    assert trace["decision"] == "clarify" and trace["reason"] == DecisionReason.PARALLEL_CANDIDATES
    assert assistant["response"]["type"] == "form"
    [field] = assistant["response"]["form"]["fields"]
    assert field["label"] == "Which one do you mean?"
    assert set(field["options"]) == {"Paracetamol leaflet", "Ibuprofen leaflet"}
    assert "subject_words" not in trace["figures"]
    assert trace["figures"]["answerability"] >= trace["figures"]["threshold"]


@pytest.mark.parametrize("doses", [PARALLEL, WORDED_APART], ids=["parallel", "worded-apart"])
def test_a_question_naming_one_drug_answers_from_its_leaflet(owner: Tenant, doses: tuple[str, str]) -> None:
    tenant = leaflets(owner, *doses)
    assistant, trace = ask(tenant, "What is the maximum daily dose of ibuprofen for adults?")
    assert trace["decision"] == "answer" and trace["reason"] is None
    assert cited_titles(assistant) == {"Ibuprofen leaflet"}
    assert "1,200 mg" in assistant["content"]


def test_an_unqualified_question_over_leaflets_worded_apart_asks_which_one(owner: Tenant) -> None:
    """Worded apart, the leaflets' dose sentences share few words, but the
    leaflets are the same kind of document about different drugs
    (chat/services/turn/subjects.py): a question naming neither asks which
    one rather than answering with the dose its wording finds first, and
    "maximum" is no uncovered subject."""
    assistant, trace = ask(leaflets(owner, *WORDED_APART), UNQUALIFIED)
    assert trace["decision"] == "clarify" and trace["reason"] == DecisionReason.PARALLEL_CANDIDATES
    [field] = assistant["response"]["form"]["fields"]
    assert set(field["options"]) == {"Paracetamol leaflet", "Ibuprofen leaflet"}


def test_a_drug_neither_leaflet_covers_is_not_answered(parallel: Tenant) -> None:
    assistant, trace = ask(parallel, "What is the maximum daily dose of aspirin?")
    assert trace["decision"] == "no_answer" and trace["reason"] == DecisionReason.UNCOVERED_SUBJECT
    assert trace["figures"]["subject_words"] == ["aspirin"]
    assert assistant["grounding"] == "none" and assistant["content"] == parallel.workspace.no_answer_text
