"""The "which one do you mean?" form, one rule at a time: labels cut at a
word boundary and told apart, options that carry their documents' ids, the
form as a numbered list, the previous reply recognised as a form by what is
stored with it (in any language), and the choice read from the answer — by
id, number, label, a start of it, or a word of it no other option has."""

from __future__ import annotations

import uuid

import pytest

from chat.prompting import HistoryTurn
from chat.services.turn import clarify
from chat.services.turn.choice import (
    Option,
    answer_text,
    asked_options,
    numbered,
    numbered_labels,
    option_chosen,
)
from languages import LANGUAGES
from workspaces.models import Workspace

GRINDER_TITLE = (
    "Grinder G4 quick reference card, covering assembly, burr adjustment, cleaning, descaling and "
    "resetting the motor"
)


def candidate(title: str, sentence: str = "It works.") -> clarify.Candidate:
    return clarify.Candidate(resource_id=uuid.uuid4(), title=title, score=0.5, sentence=sentence)


def test_a_long_title_is_cut_at_a_word_boundary_with_an_ellipsis() -> None:
    label = candidate(GRINDER_TITLE).label
    assert len(label) <= clarify.MAX_LABEL_CHARS and label.endswith("\u2026")
    stem = label.removesuffix("\u2026")
    # Whole words: the cut falls where a word ends.
    assert GRINDER_TITLE.startswith(stem) and GRINDER_TITLE[len(stem)] in " ,"


def test_an_untitled_document_is_labelled_by_its_sentence_cut_at_a_word() -> None:
    sentence = (
        "The Juicer J3 comes with a three-year warranty from the date of purchase, which covers the motor "
        "and the press."
    )
    label = candidate("2024-05-01", sentence).label
    assert label.endswith("\u2026") and sentence.startswith(label.removesuffix("\u2026"))
    assert sentence[len(label) - 1] == " "


def test_labels_a_cut_made_equal_are_told_apart() -> None:
    first = candidate(GRINDER_TITLE)
    second = candidate(GRINDER_TITLE.replace("the motor", "the timer"))
    labels = clarify.option_labels([first, second])
    assert len(set(labels)) == 2 and labels == [GRINDER_TITLE, second.title]


def test_every_candidate_is_an_option_with_its_id() -> None:
    candidates = [candidate(f"Appliance A{n} manual") for n in range(1, 8)]
    reply = clarify.clarification_reply(candidates)
    form = reply.response["form"]
    assert form is not None
    [field] = form["fields"]
    assert field["options"] == [f"Appliance A{n} manual" for n in range(1, 8)]
    assert field.get("choices") == [
        {"value": str(c.resource_id), "label": f"Appliance A{n} manual"}
        for n, c in enumerate(candidates, start=1)
    ]
    assert numbered_labels(reply.content) == field["options"]
    assert clarify.MAX_OPTIONS >= 7


def test_the_numbered_list_is_read_back() -> None:
    text = numbered("Which one do you mean?", ["Kettle K1", "Toaster T2"])
    assert text == "Which one do you mean?\n\n1. Kettle K1\n2. Toaster T2"
    assert numbered_labels(text) == ["Kettle K1", "Toaster T2"]


@pytest.mark.parametrize(
    "text",
    [
        "1. Unplug the kettle.\n2. Fill it with water.",  # a list alone is an answer, not a form
        "Which one?\n\n1. Kettle K1",  # one option is no choice
        "Which one?\n\n1. Kettle K1\n3. Toaster T2",  # not numbered 1, 2, …
        "Which one?\n\n1. Kettle K1\n2. Toaster T2\nOr something else?",  # the list does not end it
        "The Kettle K1 has a two-year warranty.",
    ],
)
def test_text_that_does_not_end_with_a_numbered_list_is_no_form(text: str) -> None:
    assert numbered_labels(text) == []


KETTLE = Option(uuid.uuid4(), "Kettle K1 manual")
TOASTER = Option(uuid.uuid4(), "Toaster T2 manual")
OPTIONS = [KETTLE, TOASTER]


@pytest.mark.parametrize(
    ("message", "chosen"),
    [
        (str(TOASTER.resource_id), TOASTER),
        (f"subject: {TOASTER.resource_id}", TOASTER),
        (str(TOASTER.resource_id).upper(), TOASTER),
        ("2", TOASTER),
        ("1.", KETTLE),
        ("\u06f2", TOASTER),  # a Persian 2
        ("Toaster T2 manual", TOASTER),
        ("subject: Toaster T2 manual", TOASTER),
        (' "kettle k1 manual" ', KETTLE),
        ("Toast", TOASTER),
        ("toaster", TOASTER),
        ("the toaster", TOASTER),
        ("K1", KETTLE),
        ("Toasters", TOASTER),
    ],
)
def test_the_choice_is_read_from_the_answer(message: str, chosen: Option) -> None:
    assert option_chosen(message, OPTIONS) == chosen


@pytest.mark.parametrize(
    "message",
    [
        str(uuid.uuid4()),  # not an option's id (another document, another workspace's)
        "3",
        "0",
        "manual",  # a word both options have
        "Does the toaster have a timer?",  # a new question, not a choice
        "ma",
        "",
    ],
)
def test_an_answer_that_chooses_no_option_chooses_none(message: str) -> None:
    assert option_chosen(message, OPTIONS) is None


def test_a_cut_label_is_chosen_by_its_start_or_by_the_whole_title() -> None:
    label = clarify.Candidate(resource_id=uuid.uuid4(), title=GRINDER_TITLE, score=0.5, sentence="").label
    grinder = Option(uuid.uuid4(), label)
    options = [KETTLE, grinder, TOASTER]
    assert option_chosen(label, options) == grinder
    assert option_chosen(GRINDER_TITLE, options) == grinder
    assert option_chosen("Grinder G4 quick reference", options) == grinder
    assert option_chosen("grinder", options) == grinder


@pytest.mark.parametrize(
    ("message", "text"),
    [("Toaster T2", "Toaster T2"), ("subject: Toaster T2", "Toaster T2"), (' "Kettle K1" ', "Kettle K1")],
)
def test_a_form_answer_line_is_read_as_its_value(message: str, text: str) -> None:
    assert answer_text(message) == text


@pytest.mark.parametrize("code", sorted(LANGUAGES))
def test_a_stored_form_is_recognised_by_its_options_ids_in_any_language(code: str) -> None:
    language = LANGUAGES[code]
    reply = clarify.clarification_reply([candidate("Kettle K1"), candidate("Toaster T2")], language)
    form = reply.response["form"]
    assert form is not None
    choices = form["fields"][0].get("choices") or []
    turn = HistoryTurn(
        question="?",
        answer=reply.content,
        form_fields=("subject",),
        form_options=tuple((c["value"], c["label"]) for c in choices),
    )
    options = asked_options(turn, workspace=Workspace())  # ids stored: no lookup
    assert [str(o.resource_id) for o in options] == [c["value"] for c in choices]
    # The wording is no marker: the question alone, as text, is not a form.
    assert (
        asked_options(HistoryTurn(question="?", answer=language.texts.which_one), workspace=Workspace()) == []
    )


def test_a_model_form_without_ids_is_not_the_question_back() -> None:
    turn = HistoryTurn(
        question="Book me in",
        answer="Which department?",
        form_fields=("department",),
        form_options=(("", "Cardiology"), ("", "Neurology")),
    )
    assert asked_options(turn, workspace=Workspace()) == []
