"""The conversation's rules, one at a time: when a question leans on the
conversation and what is searched for it, what counts as small talk, when a
question points at an unnamed subject or the evidence answers differently per
subject, and how a rewrite that is not usable is set aside."""

from __future__ import annotations

import uuid

import pytest
from pytest_django.fixtures import Settings

from chat.backends.base import Generation
from chat.backends.scripted import ScriptedBackend
from chat.prompting import HistoryTurn
from chat.services.turn import clarify, references
from chat.services.turn.followup_search import (
    CONTEXT_MAX_CHARS,
    CONTEXT_WEIGHT,
    needs_context,
    retrieval_queries,
)
from chat.services.turn.rewrite import query_rewrite
from chat.services.turn.smalltalk import is_small_talk
from languages import ENGLISH

EARLIER = ["When should I start a statin for an adult with diabetes?"]


@pytest.mark.parametrize(
    "question",
    ["And for patients over 75?", "Is there a fee for that?", "How is it calculated?", "What about Norway?"],
)
def test_a_follow_up_leans_on_the_conversation(question: str) -> None:
    assert needs_context(question, EARLIER, ENGLISH)


@pytest.mark.parametrize(
    "question",
    [
        "What blood pressure should adults with diabetes aim for?",
        "Which vaccines does an adult with diabetes need every year?",
    ],
)
def test_a_standalone_question_does_not(question: str) -> None:
    assert not needs_context(question, EARLIER, ENGLISH)


def test_the_first_question_never_leans_on_anything() -> None:
    assert not needs_context("And that?", [], ENGLISH)


def test_a_follow_up_is_searched_alone_and_with_the_earlier_turns_newest_first() -> None:
    earlier = ["Can I return a kettle?", "Can I return it opened?"]
    queries = retrieval_queries("Is there a fee for that?", earlier, language=ENGLISH)
    assert [q.text for q in queries] == [
        "Is there a fee for that?",
        "Is there a fee for that? Can I return it opened? Can I return a kettle?",
    ]
    assert [q.weight for q in queries] == [1.0, CONTEXT_WEIGHT]


def test_the_conversation_query_is_bounded_and_a_rewrite_is_searched_too() -> None:
    earlier = ["word " * 500]
    queries = retrieval_queries(
        "And that?", earlier, language=ENGLISH, rewrite="  What does a long word cost?  "
    )
    assert len(queries[1].text) == CONTEXT_MAX_CHARS
    assert queries[2].text == "What does a long word cost?" and queries[2].weight == 1.0


def test_a_rewrite_equal_to_the_question_adds_nothing() -> None:
    assert len(retrieval_queries("And that?", EARLIER, language=ENGLISH, rewrite="And that?")) == 2


@pytest.mark.parametrize(
    ("message", "small"),
    [
        ("hi", True),
        ("Hello there!", True),
        ("good morning :)", True),
        ("Thanks a lot", True),
        ("ok, thanks!", True),
        ("Merci", True),
        ("hi, how long is the warranty?", False),
        ("What is the capital of France?", False),
        ("Thanks to whom is the warranty extended?", False),
        ("", False),
    ],
)
def test_small_talk_is_only_greetings_thanks_and_goodbyes(message: str, small: bool) -> None:
    assert is_small_talk(message) is small


@pytest.mark.parametrize(
    ("question", "earlier_questions", "pointer"),
    [
        ("Does this animal have antlers?", [], "this animal"),
        ("What awards has the actor received?", ["who sings at the beginning of nice for what"], "the actor"),
        ("How wealthy is this county of California?", [], "this county"),
        ("Does this animal have antlers?", ["Tell me about the caribou, the animal of the north."], None),
        ("Who won the battle of the bull run?", [], None),
        ("What does the Prime Minister of Canada do?", [], None),
        ("How long is the warranty?", [], None),
    ],
)
def test_a_question_pointing_at_an_unnamed_subject(
    question: str, earlier_questions: list[str], pointer: str | None
) -> None:
    assert references.unresolved_reference(question, earlier_questions, ENGLISH) == pointer


def candidate(title: str, score: float, sentence: str) -> clarify.Candidate:
    return clarify.Candidate(resource_id=uuid.uuid4(), title=title, score=score, sentence=sentence)


KETTLE = candidate(
    "Kettle K1", 0.52, "The Kettle K1 comes with a two-year warranty from the date of purchase."
)
TOASTER = candidate(
    "Toaster T2", 0.47, "The Toaster T2 comes with a one-year warranty from the date of purchase."
)
EGGS = candidate("Egg guide", 0.49, "Soft eggs take about four minutes in boiling water.")


def test_parallel_answers_about_distinct_subjects_are_asked_about() -> None:
    asked = clarify.ambiguous(
        "How long is the warranty?", [], [KETTLE, TOASTER], threshold=0.38, language=ENGLISH
    )
    assert [c.label for c in asked] == ["Kettle K1", "Toaster T2"]


def test_a_question_naming_one_subject_is_answered() -> None:
    assert (
        clarify.ambiguous(
            "How long is the kettle's warranty?", [], [KETTLE, TOASTER], threshold=0.38, language=ENGLISH
        )
        == []
    )
    # ... or naming it earlier in the conversation.
    assert (
        clarify.ambiguous(
            "And the warranty?", ["I bought a toaster."], [KETTLE, TOASTER], threshold=0.38, language=ENGLISH
        )
        == []
    )


def test_answers_that_are_not_parallel_or_not_close_are_not_asked_about() -> None:
    assert (
        clarify.ambiguous("How long is the warranty?", [], [KETTLE, EGGS], threshold=0.38, language=ENGLISH)
        == []
    )
    far = candidate("Toaster T2", 0.40, TOASTER.sentence)
    assert (
        clarify.ambiguous("How long is the warranty?", [], [KETTLE, far], threshold=0.38, language=ENGLISH)
        == []
    )
    low = candidate("Toaster T2", 0.30, TOASTER.sentence)
    assert (
        clarify.ambiguous("How long is the warranty?", [], [KETTLE, low], threshold=0.38, language=ENGLISH)
        == []
    )


def test_an_unnamed_subject_asks_even_below_the_threshold() -> None:
    deer = candidate("Deer", 0.25, "Deer grow antlers every year.")
    moose = candidate("Moose", 0.22, "Moose have the largest antlers of any deer.")
    asked = clarify.ambiguous(
        "Does this animal have antlers?", [], [deer, moose], threshold=0.38, language=ENGLISH
    )
    assert [c.label for c in asked] == ["Deer", "Moose"]


def test_the_kind_of_thing_in_the_phrase_names_none_of_the_candidates() -> None:
    """ "this credit card" over documents about two cards asks which one,
    though one card's title has the word "card"; "the Gold card" names one."""
    gold = candidate("Gold card", 0.43, "Cash back on every purchase, with an annual fee.")
    travel = candidate("Travel rewards", 0.33, "Miles on flights and hotels, no foreign fees.")
    earlier = ["I'm not sure if I should take a credit card."]
    asked = clarify.ambiguous(
        "What are the potential rewards of this credit card?",
        earlier,
        [gold, travel],
        threshold=0.38,
        language=ENGLISH,
    )
    assert [c.label for c in asked] == ["Gold card", "Travel rewards"]
    named = clarify.ambiguous(
        "What are the rewards of the Gold card?", earlier, [gold, travel], threshold=0.38, language=ENGLISH
    )
    assert named == []


def test_a_reference_the_conversation_resolved_by_the_best_candidates_name_is_not_asked_about() -> None:
    """ "the video game" after questions about Fairy Tail is Fairy Tail's."""
    fairy = candidate(
        "Fairy Tail", 0.44, "An action video game for the PlayStation Portable came out in 2010."
    )
    turtles = candidate("Teenage Mutant Ninja Turtles", 0.38, "Konami also released a video game in 1989.")
    question = "I wish they had the video game too! Which consoles was it on?"
    earlier = ["When does the first Fairy Tail movie take place?"]
    assert clarify.ambiguous(question, earlier, [fairy, turtles], threshold=0.38, language=ENGLISH) == []
    asked = clarify.ambiguous(question, [], [fairy, turtles], threshold=0.38, language=ENGLISH)
    assert [c.label for c in asked] == ["Fairy Tail", "Teenage Mutant Ninja Turtles"]


def test_an_untitled_document_is_labelled_by_its_best_sentence() -> None:
    untitled = candidate(
        "162428-0-349", 0.5, "Electric vehicle batteries last longer than the first owners expect."
    )
    assert untitled.label == "Electric vehicle batteries last longer than the first owners expect."


def test_the_form_asks_which_one_with_one_select() -> None:
    reply = clarify.clarification_reply([KETTLE, TOASTER])
    assert reply.response["type"] == "form"
    assert reply.response["parts"] == [{"text": clarify.CLARIFY_QUESTION, "source": None}]
    assert reply.content == f"{clarify.CLARIFY_QUESTION}\n\n1. Kettle K1\n2. Toaster T2"
    form = reply.response["form"]
    assert form is not None
    assert form["fields"] == [
        {
            "name": "subject",
            "label": "Which one do you mean?",
            "type": "select",
            "required": True,
            "options": ["Kettle K1", "Toaster T2"],
            "choices": [
                {"value": str(KETTLE.resource_id), "label": "Kettle K1"},
                {"value": str(TOASTER.resource_id), "label": "Toaster T2"},
            ],
        }
    ]


TURNS = [HistoryTurn(question="When must inpatient claims be filed?", answer="Within 30 days.")]


@pytest.mark.parametrize("text", ["not json", '{"q": "x"}', '{"question": ""}', '{"question": 3}'])
def test_an_unusable_rewrite_is_set_aside(text: str, settings: Settings) -> None:
    class Rewriter(ScriptedBackend):
        def rewrite(self, messages: object, **kwargs: object) -> Generation | None:  # type: ignore[override]
            return Generation(text=text)

    assert query_rewrite(Rewriter(), question="And outpatient ones?", turns=TURNS) is None


def test_a_usable_rewrite_is_one_line() -> None:
    backend = ScriptedBackend(rewrites=["When must\n outpatient claims   be filed?"])
    assert query_rewrite(backend, question="And outpatient ones?", turns=TURNS) == (
        "When must outpatient claims be filed?"
    )


def test_a_statement_is_checked_not_asked_about() -> None:
    statement = "The warranty lasts two years."
    assert not clarify.is_question(statement, ENGLISH) and clarify.is_question(
        "Tell me about the warranty", ENGLISH
    )
    assert clarify.ambiguous(statement, [], [KETTLE, TOASTER], threshold=0.38, language=ENGLISH) == []


@pytest.mark.parametrize(
    ("question", "pointer"),
    [
        ("What are the potential rewards of this credit card?", "this credit card"),
        ("Could you name the crime drama TV series?", "the crime drama TV series"),
        ("When was the famous basketball player born?", "the famous basketball player"),
        ("What is the origin of the animal's breed?", "the animal"),
        ("How long is the kettle warranty?", None),
        ("What does the Prime Minister of Canada do?", None),
    ],
)
def test_the_kind_of_thing_may_be_any_word_of_the_phrase(question: str, pointer: str | None) -> None:
    assert references.unresolved_reference(question, [], ENGLISH) == pointer


@pytest.mark.parametrize(
    ("earlier", "pointer"),
    [
        (["I'm not sure if I should take a credit card."], "this credit card"),
        (["What are the rewards of credit cards?"], "this credit card"),
        (["What are the rewards of the Chase Sapphire card?"], None),
        (["Tell me about the card my bank sent."], None),
    ],
)
def test_a_demonstrative_needs_the_conversation_to_have_singled_one_out(
    earlier: list[str], pointer: str | None
) -> None:
    question = "What are the potential rewards of this credit card?"
    assert references.unresolved_reference(question, earlier, ENGLISH) == pointer
