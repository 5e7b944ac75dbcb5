"""How the extractive engine reads a passage (retrieval/units.py) and
picks its answer from scored units (select_answer), without the database or
the embedding model."""

from __future__ import annotations

import uuid

from chat.answerability import Sentence
from chat.backends.extractive import select_answer
from retrieval.search import ScoredPassage
from retrieval.units import (
    HEADING,
    ITEM,
    LEAD,
    QUESTION,
    ROW,
    SENTENCE,
    STEP,
    segment,
    split_sentences,
)


def kinds(text: str) -> list[tuple[str, str]]:
    return [(u.kind, u.text) for u in segment(text)]


def test_a_line_that_does_not_end_a_sentence_goes_on_on_the_next() -> None:
    text = (
        "Standard shipping within Germany costs 4.90 euros for\n"
        "orders under 50 euros. Orders above that ship free of\n"
        "charge.\n"
        "Returns are accepted within 30 days."
    )
    assert [s for _, s in split_sentences(text)] == [
        "Standard shipping within Germany costs 4.90 euros for orders under 50 euros.",
        "Orders above that ship free of charge.",
        "Returns are accepted within 30 days.",
    ]
    # Offsets point at each sentence's first character.
    assert [o for o, _ in split_sentences(text)] == [0, text.index("Orders"), text.index("Returns")]


def test_a_blank_line_ends_a_paragraph_even_mid_sentence() -> None:
    text = (
        "The first paragraph stops here although its sentence has not come to an end\n\nthe second one does."
    )
    assert [s for _, s in split_sentences(text)] == [
        "The first paragraph stops here although its sentence has not come to an end",
        "the second one does.",
    ]


def test_a_word_broken_at_the_line_end_is_rejoined() -> None:
    text = (
        "It is recom-\nmended to keep the packaging. The COVID-\n19 rules and the self-\nService desk apply."
    )
    assert [s for _, s in split_sentences(text)] == [
        "It is recommended to keep the packaging.",
        "The COVID-19 rules and the self-Service desk apply.",
    ]


def test_list_items_and_table_rows_are_units_of_their_own() -> None:
    text = (
        "To descale the kettle:\n"
        "- fill it with water and vinegar\n"
        "- boil it twice and rinse it\n"
        "well with clean water.\n"
        "1. Open the app on your phone.\n"
        "2. Hold the power button for 5 seconds.\n"
        "| Plan | Price | Delivery |\n"
        "|------|-------|----------|\n"
        "| Standard | 4.90 EUR | 3 days |"
    )
    assert kinds(text) == [
        (LEAD, "To descale the kettle:"),
        (ITEM, "fill it with water and vinegar"),
        (ITEM, "boil it twice and rinse it well with clean water."),
        (STEP, "Open the app on your phone."),
        (STEP, "Hold the power button for 5 seconds."),
        (ROW, "Plan | Price | Delivery"),
        (ROW, "Standard | 4.90 EUR | 3 days"),
    ]
    units = segment(text)
    assert len({u.group for u in units[:5]}) == 1  # one list, with its lead
    assert units[5].group != units[6].group


def test_headings_are_context_not_answers() -> None:
    text = (
        "# Kettle FAQ\n\n"
        "Is there a warranty?\n\n"
        "Yes. Every kettle has a two-year warranty.\n\n"
        "Shipping costs\n"
        "Standard shipping costs 4.90 euros for all orders.\n"
        "Returns\n"
        "Any item can be returned within 30 days."
    )
    units = segment(text)
    assert [(u.kind, u.text, u.heading) for u in units] == [
        (HEADING, "Kettle FAQ", "Kettle FAQ"),
        (HEADING, "Is there a warranty?", "Is there a warranty?"),
        (SENTENCE, "Every kettle has a two-year warranty.", "Is there a warranty?"),
        (HEADING, "Shipping costs", "Shipping costs"),
        (SENTENCE, "Standard shipping costs 4.90 euros for all orders.", "Shipping costs"),
        (HEADING, "Returns", "Returns"),
        (SENTENCE, "Any item can be returned within 30 days.", "Returns"),
    ]
    assert all(s != u.text for _, s in split_sentences(text) for u in units if u.kind == HEADING)


def test_a_short_line_under_a_question_is_its_answer() -> None:
    assert kinds("How long does it take to boil?\n\nAbout three minutes for a full kettle") == [
        (HEADING, "How long does it take to boil?"),
        (SENTENCE, "About three minutes for a full kettle"),
    ]


def test_a_question_inside_a_paragraph_is_no_answer_and_no_heading() -> None:
    units = segment("Why descale? Because scale slows the heating down.")
    assert [(u.kind, u.text, u.heading) for u in units] == [
        (QUESTION, "Why descale?", None),
        (SENTENCE, "Because scale slows the heating down.", None),
    ]


def test_a_long_line_without_a_full_stop_is_not_a_title() -> None:
    # A hard-wrapped line as long as its neighbours goes on on the next line.
    text = "Delivery\nStandard shipping within Germany is free for\nOrders placed by members of the club."
    assert kinds(text) == [
        (HEADING, "Delivery"),
        (SENTENCE, "Standard shipping within Germany is free for Orders placed by members of the club."),
    ]


# --- selecting the answer ------------------------------------------------------


def _passages(*docs: tuple[uuid.UUID, str]) -> list[ScoredPassage]:
    return [
        ScoredPassage(uuid.uuid4(), resource, "Doc", text, 1.0 - rank / 10, rank + 1, rank, None)
        for rank, (resource, text) in enumerate(docs)
    ]


def _sentences(passages: list[ScoredPassage]) -> list[Sentence]:
    return [Sentence(i, u) for i, p in enumerate(passages) for u in segment(p.text) if u.kind != HEADING]


def test_the_answer_stays_on_the_best_sentences_document() -> None:
    kettle, holiday = uuid.uuid4(), uuid.uuid4()
    passages = _passages(
        (kettle, "The kettle boils in three minutes. It switches off by itself."),
        (holiday, "Holiday requests go to the team lead. Unused days expire in March."),
    )
    sentences = _sentences(passages)
    # The other document's sentence scores 0.9 of the best: close enough for
    # a further part of the same document, not for another document's.
    scores = {0: 0.60, 1: 0.52, 2: 0.54, 3: 0.30}
    assert [sentences[i].text for i in select_answer(sentences, scores, passages)] == [
        "The kettle boils in three minutes.",
        "It switches off by itself.",
    ]
    # Nearly as good on its own, and a fact of its own: it joins, after.
    scores[2] = 0.58
    chosen = select_answer(sentences, scores, passages)
    assert [sentences[i].text for i in chosen] == [
        "The kettle boils in three minutes.",
        "It switches off by itself.",
        "Holiday requests go to the team lead.",
    ]


def test_another_documents_copy_of_the_same_fact_does_not_join() -> None:
    first, second = uuid.uuid4(), uuid.uuid4()
    passages = _passages(
        (first, "The kettle boils a full load in three minutes."),
        (second, "A full load: the kettle boils it in three minutes."),
    )
    sentences = _sentences(passages)
    chosen = select_answer(sentences, {0: 0.6, 1: 0.59}, passages)
    assert [sentences[i].text for i in chosen] == ["The kettle boils a full load in three minutes."]


def test_documents_come_in_retrievals_order() -> None:
    first, second = uuid.uuid4(), uuid.uuid4()
    passages = _passages(
        (first, "Holiday requests go to the lead."), (second, "The kettle boils in three minutes.")
    )
    sentences = _sentences(passages)
    chosen = select_answer(sentences, {0: 0.58, 1: 0.6}, passages)
    assert [sentences[i].text for i in chosen] == [
        "Holiday requests go to the lead.",
        "The kettle boils in three minutes.",
    ]


def test_numbered_steps_answer_whole_and_in_order() -> None:
    doc = uuid.uuid4()
    passages = _passages(
        (
            doc,
            "How do I pair it?\n\n1. Open the app.\n2. Hold the button for 5 seconds.\n"
            "3. Tap the kettle's name.",
        )
    )
    sentences = _sentences(passages)
    assert [s.text for s in sentences] == [
        "Open the app.",
        "Hold the button for 5 seconds.",
        "Tap the kettle's name.",
    ]
    chosen = select_answer(sentences, {0: 0.40, 1: 0.55, 2: 0.35}, passages)
    assert chosen == [0, 1, 2]


def test_a_bulleted_list_keeps_the_items_close_to_the_best() -> None:
    doc = uuid.uuid4()
    passages = _passages(
        (
            doc,
            "Our shop has these policies:\n- Shipping is free above 50 euros.\n"
            "- Returns are free for 30 days.\n- Gift cards never expire at all.",
        )
    )
    sentences = _sentences(passages)
    chosen = select_answer(sentences, {0: 0.3, 1: 0.3, 2: 0.6, 3: 0.5}, passages)
    assert [sentences[i].text for i in chosen] == [
        "Our shop has these policies:",
        "Returns are free for 30 days.",
        "Gift cards never expire at all.",
    ]


def test_nothing_close_enough_selects_nothing() -> None:
    passages = _passages((uuid.uuid4(), "The kettle boils in three minutes."))
    assert select_answer(_sentences(passages), {0: 0.2}, passages) == []
    assert select_answer(_sentences(passages), {}, passages) == []
