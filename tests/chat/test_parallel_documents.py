"""Parallel documents written the way people write them: each manual or
leaflet names its own subject in its sentences ("The Kettle K1 comes with a
limited manufacturer warranty of two years from delivery."), ingested with
the real embedding model and asked through the chat API on the extractive
engine (chat/services/turn/subjects.py, clarify.py, retrieve.py).

A question naming none of the subjects asks which one; one naming a
subject (its name, its model, a word only it has) answers from its
document; one naming a subject none covers is "the documents don't say";
after a choice, or an answer from one document, a follow-up stays on that
subject. The Persian leaflets: test_parallel_texts.py."""

from __future__ import annotations

from typing import Any

import pytest

from chat.contract import DecisionReason
from resources.ingestion import resource_ingest
from resources.services import Upload, resource_create
from tests.chat.helpers import cited_resources as cited
from tests.chat.helpers import ingest_text
from tests.chat.helpers import traced_turn as ask
from tests.conftest import Tenant
from workspaces.models import DEFAULT_ANSWERABILITY_THRESHOLD, Workspace

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

WARRANTY = "The {} comes with a limited manufacturer warranty of {} from delivery."
LONG = " quick reference card, covering assembly, settings, cleaning, descaling, storage and resetting"
# (title, product, warranty); the juicer's manual is uploaded without a title.
MANUALS = (
    ("Kettle K1", "Kettle K1", "two years"),
    ("Toaster T2", "Toaster T2", "three years"),
    ("Blender B3", "Blender B3", "four years"),
    ("Grinder G4" + LONG, "Grinder G4", "five years"),
    ("Mixer M5" + LONG, "Mixer M5", "one year"),
    ("", "Juicer J6", "six years"),
    ("Fryer F7", "Fryer F7", "seven years"),
)
# (drug, maximum daily dose, over 70)
DRUGS = (("Ibuprofen", "1,200 mg", "800 mg"), ("Paracetamol", "4 g", "3 g"), ("Aspirin", "3 g", "1 g"))
DOSE = "What is the maximum daily dose for adults?"


def ready(workspace: Workspace, title: str, text: str) -> str:
    """A document uploaded and ingested as a file; titled from its text when ``title`` is empty."""
    upload = Upload(data=text.encode(), title=title, filename=f"{title or 'untitled'}.txt")
    resource = resource_create(workspace=workspace, upload=upload).resource
    assert resource_ingest(resource_id=resource.id) == "ready"
    return str(resource.id)


@pytest.fixture
def manuals(owner: Tenant) -> dict[str, str]:
    """The seven manuals' ids by product."""
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.save()
    ids = {}
    for title, product, years in MANUALS:
        intro = f"The {product} is designed for everyday use in a home kitchen."
        ids[product] = ready(owner.workspace, title, f"{intro}\n\n{WARRANTY.format(product, years)}")
    return ids


@pytest.fixture
def leaflets(owner: Tenant) -> dict[str, str]:
    """Three drug leaflets, each naming its drug in every sentence: ids by drug."""
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.save()
    ids = {}
    for drug, dose, older in DRUGS:
        text = (
            f"{drug} relieves pain and lowers fever.\n\n"
            f"The maximum daily dose of {drug.lower()} for adults is {dose}.\n\n"
            f"For patients over 70, {drug.lower()} should be limited to {older} a day."
        )
        ids[drug] = str(ingest_text(owner.workspace, f"{drug} leaflet", text).id)
    return ids


def choices(assistant: dict[str, Any]) -> list[str]:
    assert assistant["response"]["type"] == "form", assistant
    [field] = assistant["response"]["form"]["fields"]
    return [choice["value"] for choice in field["choices"]]


def test_how_long_is_the_warranty_over_manuals_naming_their_products_asks_which_one(
    owner: Tenant, manuals: dict[str, str]
) -> None:
    assistant, trace, _ = ask(owner, "How long is the warranty?")
    assert trace["decision"] == "clarify" and trace["reason"] == DecisionReason.PARALLEL_CANDIDATES
    assert set(choices(assistant)) == set(manuals.values())


@pytest.mark.parametrize(
    ("question", "product"),
    [
        ("How long is the warranty of the juicer?", "Juicer J6"),
        ("How long is the warranty of the G4?", "Grinder G4"),
        ("What warranty does the Kettle K1 have?", "Kettle K1"),
    ],
)
def test_a_question_naming_a_product_answers_from_its_manual(
    owner: Tenant, manuals: dict[str, str], question: str, product: str
) -> None:
    assistant, trace, _ = ask(owner, question)
    assert trace["decision"] == "answer", trace
    assert cited(assistant) == {manuals[product]}


def test_a_product_no_manual_covers_is_not_answered(owner: Tenant, manuals: dict[str, str]) -> None:
    assistant, trace, _ = ask(owner, "How long is the dishwasher warranty?")
    assert trace["decision"] == "no_answer" and trace["reason"] == DecisionReason.UNCOVERED_SUBJECT
    assert assistant["grounding"] == "none" and not cited(assistant)


def test_a_drug_no_leaflet_covers_is_not_answered_with_other_drugs_doses(
    owner: Tenant, leaflets: dict[str, str]
) -> None:
    assistant, trace, _ = ask(owner, "What is the maximum daily dose of naproxen for adults?")
    assert trace["reason"] == DecisionReason.UNCOVERED_SUBJECT
    assert trace["figures"]["subject_words"] == ["naproxen"]
    assert not cited(assistant)


def test_after_choosing_a_drug_a_follow_up_cites_its_leaflet_only(
    owner: Tenant, leaflets: dict[str, str]
) -> None:
    form, _, session = ask(owner, DOSE)
    options = choices(form)
    assert set(options) == set(leaflets.values())
    number = options.index(leaflets["Ibuprofen"]) + 1
    chosen, trace, _ = ask(owner, str(number), session)
    assert cited(chosen) == {leaflets["Ibuprofen"]}
    assert trace["subject"] == {"resource_id": leaflets["Ibuprofen"], "from": "choice"}
    follow, trace, _ = ask(owner, "And for patients over 70?", session)
    assert cited(follow) == {leaflets["Ibuprofen"]}, follow
    assert "800 mg" in follow["content"]
    assert trace["subject"] == {"resource_id": leaflets["Ibuprofen"], "from": "previous_answer"}


def test_a_follow_up_that_names_another_drug_leaves_the_subject(
    owner: Tenant, leaflets: dict[str, str]
) -> None:
    first, _, session = ask(owner, "What is the maximum daily dose of ibuprofen for adults?")
    assert cited(first) == {leaflets["Ibuprofen"]}
    follow, trace, _ = ask(owner, "And for paracetamol?", session)
    assert "subject" not in trace or trace["subject"]["resource_id"] != leaflets["Ibuprofen"]
    assert leaflets["Paracetamol"] in cited(follow)


def test_a_follow_up_asking_to_compare_is_not_kept_to_the_subject(
    owner: Tenant, leaflets: dict[str, str]
) -> None:
    first, _, session = ask(owner, "What is the maximum daily dose of ibuprofen for adults?")
    assert cited(first) == {leaflets["Ibuprofen"]}
    _, trace, _ = ask(owner, "And how do the others compare?", session)
    assert "subject" not in trace


def test_a_named_subject_whose_sentence_does_not_name_it_is_answered_from_its_document(owner: Tenant) -> None:
    """Two booklets name their car in the oil sentence; the Brio's does not:
    "the Brio" answers from the Brio's booklet, not from the others'."""
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.save()
    ids = {}
    for car, oil, km in (
        ("Aria", "The Aria needs an oil change every {}.", "10,000 km"),
        ("Brio", "Oil should be changed every {}.", "15,000 km"),
        ("Corsa", "The Corsa needs an oil change every {}.", "20,000 km"),
    ):
        text = f"This booklet covers maintenance of the {car}.\n\n{oil.format(km)}\n\nThe {car} seats five."
        ids[car] = ready(owner.workspace, f"Maintenance booklet {car}", text)
    assistant, trace, _ = ask(owner, "How often does the Brio need an oil change?")
    assert cited(assistant) == {ids["Brio"]}, assistant
    assert "15,000 km" in assistant["content"]
    assert trace["subject"] == {"resource_id": ids["Brio"], "from": "named"}


@pytest.fixture
def bikes(owner: Tenant) -> dict[str, str]:
    """Two data sheets of e-bikes, worded differently, told apart by their
    model numbers only: ids by model."""
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.save()
    sheets = {
        "Volt 20": (
            "The Volt 20 is a folding e-bike for city commuters.\n\n"
            "The Volt 20 weighs 18 kg.\n\n"
            "On a full charge the Volt 20 rides 40 km."
        ),
        "Volt 28": (
            "The Volt 28 is a folding e-bike for city commuters.\n\n"
            "At 23 kg, the Volt 28 still folds small enough for a train.\n\n"
            "The battery of the Volt 28 carries it 65 km."
        ),
    }
    return {model: ready(owner.workspace, f"{model} data sheet", text) for model, text in sheets.items()}


def test_a_model_number_names_one_of_sheets_worded_differently_and_its_follow_up_stays(
    owner: Tenant, bikes: dict[str, str]
) -> None:
    """The Volt 28 is named by its number, though the two sheets word
    their weights differently; the follow-up stays on it, not on the other
    sheet that words its range as the question does."""
    first, trace, session = ask(owner, "How much does the Volt 28 weigh?")
    assert cited(first) == {bikes["Volt 28"]}, first
    assert "23 kg" in first["content"] and trace["subject"]["from"] == "named"
    follow, trace, _ = ask(owner, "And how far does it ride on a full charge?", session)
    assert cited(follow) == {bikes["Volt 28"]}, follow
    assert trace["subject"] == {"resource_id": bikes["Volt 28"], "from": "previous_answer"}


def test_after_a_choice_a_follow_up_about_a_part_its_sheet_words_otherwise_stays_on_it(
    owner: Tenant, bikes: dict[str, str]
) -> None:
    """The battery is a part of the chosen bike, not another subject,
    though only the other sheet has the word."""
    form, _, session = ask(owner, "How much does the e-bike weigh?")
    options = choices(form)
    assert set(options) == set(bikes.values())
    chosen, _, _ = ask(owner, str(options.index(bikes["Volt 20"]) + 1), session)
    assert cited(chosen) == {bikes["Volt 20"]} and "18 kg" in chosen["content"]
    follow, trace, _ = ask(owner, "And how far does the battery ride on a full charge?", session)
    assert cited(follow) == {bikes["Volt 20"]}, (follow["content"], trace.get("subject"))
    assert "40 km" in follow["content"]
    assert trace["subject"] == {"resource_id": bikes["Volt 20"], "from": "previous_answer"}
