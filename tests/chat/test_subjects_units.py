"""The rules that keep an answer on the subject asked, one at a time: a
document's title line is a heading, not an answer (chat/headings.py);
counterparts and a follow-up's own subject (chat/backends/focus.py); what a
question names and whether the documents cover it
(chat/services/turn/naming.py)."""

from __future__ import annotations

import uuid

import pytest

from chat.answerability import Sentence
from chat.backends.extractive import select_answer
from chat.backends.focus import Asked, counterparts, off_subject
from chat.headings import answer_units, is_heading, names_document
from chat.services.turn.naming import question_names, turn_asked, uncovered
from chat.text import content_words
from languages import ENGLISH
from retrieval.search import ScoredPassage
from retrieval.units import HEADING, SENTENCE

TOASTER = "Toaster T2 manual.\n\nThe Toaster T2 comes with a one-year warranty from the date of purchase."
RESET = "To reset it, hold the {} for five seconds until the light blinks."
INPATIENT = "Inpatient claims must be filed within 30 days of discharge."
OUTPATIENT = "Outpatient claims must be filed within 90 days of the visit."
PAID = "Claims are paid by bank transfer within ten working days of approval."
SENIORS = "Members aged 70 or over have 60 days after discharge to file an inpatient claim."


@pytest.mark.parametrize(
    ("line", "title", "names"),
    [
        ("Toaster T2 manual.", "Toaster T2", True),
        ("The Toaster T2 manual.", "Toaster T2", True),
        ("Claims policy.", "Claims policy", True),
        # Statements, not names: a function word after the first, or half its words not the title's.
        ("Returns are free.", "Returns", False),
        ("Returns are free within 30 days.", "Returns are free within 30 days.", False),
        ("Kettle K1 warranty: two years.", "Kettle K1", False),
        ("Toaster T2 manual.", "Kettle K1", False),
    ],
)
def test_a_title_line_names_its_document_and_says_nothing_else(line: str, title: str, names: bool) -> None:
    assert names_document(line, title) is names


def test_the_title_line_of_a_documents_first_passage_is_a_heading() -> None:
    first, sentence = answer_units(TOASTER, ordinal=0, title="Toaster T2")
    assert (first.kind, first.text) == (HEADING, "Toaster T2 manual.")
    assert sentence.kind == SENTENCE and sentence.heading is None
    # Not at the top of the document, or not a line of its own: a sentence.
    assert [u.kind for u in answer_units(TOASTER, ordinal=1, title="Toaster T2")] == [SENTENCE, SENTENCE]
    joined = TOASTER.replace("\n\n", " ")
    assert [u.kind for u in answer_units(joined, ordinal=0, title="Toaster T2")] == [SENTENCE, SENTENCE]


@pytest.mark.parametrize(
    ("part", "text", "heading"),
    [
        ("Toaster T2 manual", TOASTER, True),
        ("Toaster T2 manual", TOASTER.replace("Toaster T2 manual.", "# Toaster T2 manual"), True),
        ("The Toaster T2 comes with a one-year warranty.", TOASTER, False),
        ("Toaster T2 manual", TOASTER.replace("Toaster T2 manual.\n\n", ""), False),
    ],
)
def test_a_part_that_only_repeats_a_heading_is_a_heading(part: str, text: str, heading: bool) -> None:
    assert is_heading(part, text=text, ordinal=0, title="Toaster T2") is heading


def test_counterparts_say_the_same_with_other_words_in_places() -> None:
    assert counterparts(INPATIENT, OUTPATIENT)
    assert counterparts(RESET.format("Cancel lever"), RESET.format("lid button"))
    assert not counterparts(INPATIENT, PAID)
    assert not counterparts(INPATIENT, SENIORS)


def _passage(resource: uuid.UUID, title: str, text: str, rank: int) -> ScoredPassage:
    return ScoredPassage(uuid.uuid4(), resource, title, text, 1.0 - rank / 10, rank + 1, 0, None)


def _sentences(passages: list[ScoredPassage]) -> list[Sentence]:
    return [Sentence(i, u) for i, p in enumerate(passages) for u in answer_units(p.text, ordinal=1, title="")]


def test_a_counterpart_that_names_less_of_what_was_asked_is_set_aside() -> None:
    kettle, toaster = uuid.uuid4(), uuid.uuid4()
    passages = [
        _passage(kettle, "Kettle K1", f"{RESET.format('lid button')} Then rinse it twice.", 0),
        _passage(toaster, "Toaster T2", f"{RESET.format('Cancel lever')} Then let it cool.", 1),
    ]
    sentences = _sentences(passages)
    scores = {0: 0.62, 1: 0.55, 2: 0.60, 3: 0.54}
    # Asked about the toaster (its manual's title names it): the kettle's reset goes.
    aside = off_subject(sentences, scores, passages, Asked(content_words("How do I reset the toaster?")))
    assert aside == {0}
    # "How do I reset it?" after the toaster: the conversation's subject.
    asked = Asked(
        content_words("How do I reset it?"),
        content_words("How long is the toaster warranty?"),
        leans=True,
        from_conversation=True,
    )
    chosen = select_answer(sentences, scores, passages, asked=asked)
    assert [sentences[i].text for i in chosen] == [RESET.format("Cancel lever"), "Then let it cool."]
    # Neither named: both stay (the form asks which one, chat/services/turn/clarify.py).
    assert off_subject(sentences, scores, passages, Asked(content_words("How do I reset it?"))) == set()


def test_a_follow_up_that_stands_on_its_own_is_answered_about_its_own_subject() -> None:
    policy, seniors = uuid.uuid4(), uuid.uuid4()
    passages = [
        _passage(seniors, "Senior members", SENIORS, 0),
        _passage(policy, "Claims policy", f"{INPATIENT} {OUTPATIENT}", 1),
    ]
    sentences = _sentences(passages)
    assert [s.text for s in sentences] == [SENIORS, INPATIENT, OUTPATIENT]
    # Measured on the quickstart's conversation: averaged with the
    # conversation about inpatient claims, the senior members' sentence
    # scores best; against the question alone, the outpatient one does.
    scores = {0: 0.709, 1: 0.575, 2: 0.668}
    alone = {0: 0.551, 1: 0.578, 2: 0.727}
    asked = Asked(
        content_words("When are outpatient claims due?"),
        content_words("How long do I have to file an inpatient claim? And if I am over 70?"),
    )
    assert off_subject(sentences, scores, passages, asked, alone) == {0, 1}
    assert select_answer(sentences, scores, passages, asked=asked, alone=alone) == [2]
    # A follow-up that leans on the conversation is not filtered by its words alone.
    assert off_subject(
        sentences, scores, passages, Asked(asked.own, asked.conversation, leans=True), alone
    ) == {1}


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("How long is the dishwasher warranty?", {"dishwasher"}),
        ("What is the warranty of the microwave?", {"warranty", "microwave"}),
        # Pinned down ("of …", "named …"): the word after the pin too.
        ("What is the maximum daily dose of aspirin?", {"dose", "aspirin"}),
        ("Who is the dog named Rex?", {"dog", "rex"}),
        ("How long is the dishwasher warranty in the kitchen?", {"dishwasher", "kitchen"}),
        ("How long is the warranty?", {"warranty"}),
        ("Is it sold in Argentina?", {"argentina"}),
        ("Does the K9 have a timer?", {"k9"}),
        # Words that say which of its values is asked name no thing: the phrase's next word does.
        ("What is the maximum daily dose for adults?", {"dose"}),
        ("What is the recommended dose?", {"dose"}),
        # A kind of thing, a word that refers back, a sentence's first word: no names.
        ("How long is the product warranty?", set()),
        ("Thanks. What about the other one?", set()),
        ("Tell me more about warranties", set()),
    ],
)
def test_what_a_question_names(question: str, names: set[str]) -> None:
    assert question_names(question, ENGLISH) == frozenset(names)


def test_a_name_is_covered_by_a_passage_or_its_documents_title() -> None:
    passages = [_passage(uuid.uuid4(), "Kettle K1", "It comes with a two-year warranty.", 0)]
    assert uncovered({"warranty", "kettle", "dishwasher"}, passages) == {"dishwasher"}


@pytest.mark.parametrize(
    ("question", "leans", "from_conversation"),
    [
        ("How do I reset it?", True, True),
        ("What about the dishwasher?", True, False),
        ("When are outpatient claims due?", False, False),
    ],
)
def test_what_a_follow_up_asks_with(question: str, leans: bool, from_conversation: bool) -> None:
    asked = turn_asked(question, ["How long is the toaster warranty?"], ENGLISH, follow_up=True)
    assert asked.conversation == {"long", "toaster", "warranty"} - asked.own
    assert (asked.leans, asked.from_conversation) == (leans, from_conversation)
    assert turn_asked(question, [], ENGLISH, follow_up=False) == Asked(content_words(question))
