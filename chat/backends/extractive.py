"""The extractive answer engine: the best sentences of the retrieved passages,
each cited to its passage, and nothing else.

It generates no text, so it cannot make anything up: every part of its
answer is a sentence, list item or table row of a passage retrieved for this
turn (retrieval/units.py reads them out of the passage text: lines
broken mid-sentence are joined, headings and questions are told apart). It
is the embedded default (``make run``), the engine a turn falls back to when
the generative backend is unavailable (``Workspace.on_generation_unavailable``),
and fast enough (one forward pass of the embedding model over the question,
the candidate sentences and their headings) to answer in milliseconds.

Scoring a sentence (chat/answerability.py, which the turn's answerability check
shares; weights measured with
``bench/answer_quality``):

* **meaning**: cosine similarity of the question and the sentence under the
  embedding model the workspace already uses;
* **words**: the share of the question's content words the sentence
  contains (crude stemming; stop words ignored);
* **numbers**: a question about a quantity ("a 75 year old") boosts a
  sentence whose stated range holds it ("over 70") and demotes one whose
  range excludes it ("under 65");
* **rank**: a small prior for the passage's retrieval rank;
* **heading**: a sentence under a heading scores at least the mean of its
  own score and its heading's (meaning, words and rank of the heading), so
  the steps under "How do I pair the kettle with the app?" answer "How do I
  pair the kettle?" although they share no word with it. A heading only
  raises a score, and is never an answer or a part of one.

Selecting the answer (:func:`select_answer`) from the best-scoring unit:

* nothing scores ``MIN_SCORE``: the engine says so plainly, without a source;
* the best is in a list: the list answers. A numbered list (steps) or one
  whose lead line ("To descale it:") is the best comes whole, lead first; a
  bulleted list keeps the items scoring ``LIST_RATIO`` of the best. At most
  ``MAX_LIST_PARTS`` items (a window around the best) and ``MAX_CHARS``;
* otherwise up to ``MAX_PARTS`` sentences: from the best one's document,
  those scoring ``KEEP_RATIO`` of the best; from another document, only a
  sentence scoring ``OTHER_DOCUMENT_RATIO`` of the best (nearly as well, on
  its own merit) that states something the chosen parts do not (at most
  ``SAME_FACT_SHARE`` of its content words already among theirs). So the
  sentences of unrelated documents are not glued into one answer, while a
  second document that states a further fact as well still adds it.

Sentences about another subject than asked are set aside first
(chat/backends/focus.py): one that says the same as a counterpart naming
more of what was asked (the kettle's reset beside the toaster's, when the
toaster was asked about, or was the conversation's subject), and, for a
follow-up that stands on its own ("When are outpatient claims due?" after
questions about inpatient claims), one that answers the conversation
rather than the question.

Parts are read in document order, documents in retrieval's order (which
on ``bench/answer_quality`` puts a relevant document first more often than
the best sentence's document would). A workspace with no ready documents
gets a fixed answer, in the question's language (languages/<code>/texts.py), as its
"no sentence answers" is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Literal

from chat.answerability import Assessment, Sentence, assess
from chat.backends.base import BaseBackend
from chat.backends.focus import Asked, off_subject
from chat.contract import Part, Reply, ResponseType
from chat.output import ParsedReply, render_content, source_of, text_reply
from chat.quoting import quoted
from chat.text import content_words
from languages import ENGLISH, Language
from retrieval.search import ScoredPassage
from retrieval.units import LEAD, LISTED, STEP

# The English texts (every language's: languages/<code>/texts.py).
NO_DOCUMENTS_TEXT = ENGLISH.texts.no_documents_text
NO_ANSWER_TEXT = ENGLISH.texts.not_found_text

# Weights of the score's terms; the floor below which nothing answers.
MIN_SCORE = 0.30
# Further sentences join the best one when they score this close to it: from
# its own document, from another one (which must also add a new fact), or
# from the same list.
KEEP_RATIO = 0.85
OTHER_DOCUMENT_RATIO = 0.95
LIST_RATIO = 0.75
SAME_FACT_SHARE = 0.8
MAX_PARTS = 3
MAX_LIST_PARTS = 8
MAX_CHARS = 900


class ExtractiveBackend(BaseBackend):
    """Answers from the retrieved passages' own sentences (see the module doc)."""

    backend_name = "extractive"
    # No prompt, no generation: the turn calls answer() (BaseBackend's doc).
    generative: ClassVar[Literal[False]] = False
    # It asks which subject is meant with a one-select form (chat/services/turn/clarify.py).
    supports_forms = True

    def answer(
        self,
        question: str,
        passages: Sequence[ScoredPassage],
        *,
        grounded: bool,
        assessment: Assessment | None = None,
        context: str | None = None,
        language: Language = ENGLISH,
        asked: Asked | None = None,
    ) -> ParsedReply:
        """The reply to ``question`` from ``passages`` (ranked best first).

        ``assessment``: the passages already scored for this question (the
        turn's answerability check did it); ``context``: the question with
        the conversation, for a follow-up (chat/answerability.py);
        ``language``: the question's, for the engine's own texts;
        ``asked``: the words the turn asks with (chat/backends/focus.py; by
        default the question's own).
        """
        if not grounded:
            return text_reply(language.texts.no_documents_text)
        if assessment is None:
            assessment = assess(question, passages, context=context)
        sentences = assessment.sentences
        asked = asked or Asked(content_words(question))
        chosen = select_answer(sentences, assessment.scores, passages, asked=asked, alone=assessment.alone)
        if not chosen:
            return text_reply(language.texts.not_found_text)
        return _answer([sentences[i] for i in chosen], passages, language)


def select_answer(
    sentences: Sequence[Sentence],
    scores: dict[int, float],
    passages: Sequence[ScoredPassage],
    *,
    asked: Asked | None = None,
    alone: dict[int, float] | None = None,
) -> list[int]:
    """The indices of the answer's parts in ``sentences``, in reading order;
    none when nothing answers. ``scores`` holds the scored sentences' scores;
    with ``asked``, the words the question (and its conversation) asks with,
    a sentence about another subject than asked is set aside
    (chat/backends/focus.py; ``alone``: a follow-up's scores against the
    question alone)."""
    if asked is not None:
        aside = off_subject(sentences, scores, passages, asked, alone)
        scores = {i: score for i, score in scores.items() if i not in aside}
    if not scores:
        return []
    best = max(scores, key=lambda i: (scores[i], -i))
    if scores[best] < MIN_SCORE:
        return []
    members = _list_of(sentences, best)
    if any(sentences[i].unit.kind != LEAD for i in members):
        chosen = _list_parts(sentences, scores, members, best)
    else:
        chosen = _further_parts(sentences, scores, passages, best)
    return _document_order(chosen, sentences, passages)


def _list_of(sentences: Sequence[Sentence], index: int) -> list[int]:
    """The units of the list (lead and items) ``index`` belongs to; empty when none."""
    unit = sentences[index].unit
    if unit.kind not in LISTED:
        return []
    passage = sentences[index].passage_index
    return [
        i
        for i, s in enumerate(sentences)
        if s.passage_index == passage and s.unit.group == unit.group and s.unit.kind in LISTED
    ]


def _list_parts(
    sentences: Sequence[Sentence], scores: dict[int, float], members: list[int], best: int
) -> list[int]:
    """A list answers as a list: whole when numbered or when its lead is the
    best, else the items scoring close to the best; a window around it."""
    whole = sentences[best].unit.kind == LEAD or any(sentences[i].unit.kind == STEP for i in members)
    floor = LIST_RATIO * scores[best]
    lead = [i for i in members if sentences[i].unit.kind == LEAD]
    items = [
        i
        for i in members
        if sentences[i].unit.kind != LEAD and (whole or i == best or scores.get(i, 0.0) >= floor)
    ]
    if best in items:
        position = items.index(best)
        first = max(0, min(position - MAX_LIST_PARTS // 2, len(items) - MAX_LIST_PARTS))
        items = items[first : first + MAX_LIST_PARTS]
    else:
        items = items[:MAX_LIST_PARTS]
    chosen: list[int] = []
    total = 0
    for i in lead + items:
        if chosen and total + len(sentences[i].text) > MAX_CHARS:
            break
        chosen.append(i)
        total += len(sentences[i].text)
    return chosen


def _further_parts(
    sentences: Sequence[Sentence], scores: dict[int, float], passages: Sequence[ScoredPassage], best: int
) -> list[int]:
    """The best sentence and the few that score close to it (see the module doc)."""
    document = passages[sentences[best].passage_index].resource_id
    chosen = [best]
    total = len(sentences[best].text)
    for i in sorted(scores, key=lambda i: (-scores[i], i)):
        if len(chosen) == MAX_PARTS or scores[i] < max(MIN_SCORE, KEEP_RATIO * scores[best]):
            break
        text = sentences[i].text
        if i == best or total + len(text) > MAX_CHARS or any(sentences[c].text == text for c in chosen):
            continue
        other = passages[sentences[i].passage_index].resource_id != document
        if other and (
            scores[i] < OTHER_DOCUMENT_RATIO * scores[best] or not _adds_a_fact(sentences, chosen, i)
        ):
            continue
        chosen.append(i)
        total += len(text)
    return chosen


def _adds_a_fact(sentences: Sequence[Sentence], chosen: list[int], index: int) -> bool:
    words = content_words(sentences[index].text)
    known = set().union(*(content_words(sentences[i].text) for i in chosen))
    return bool(words) and len(words & known) / len(words) < SAME_FACT_SHARE


# Sentences embedded per answer: those that share most words with the
# question (or whose heading does), and the best passage's own (an answer
# may share no word).
def _document_order(
    chosen: list[int], sentences: Sequence[Sentence], passages: Sequence[ScoredPassage]
) -> list[int]:
    """Documents in order of their best passage (retrieval's order: on SciFact
    it finds the relevant document first more often than the sentence scores
    do); within a document, by position."""
    first_rank: dict[object, int] = {}
    for index, passage in enumerate(passages):
        first_rank.setdefault(passage.resource_id, index)

    def key(i: int) -> tuple[int, int, int]:
        passage = passages[sentences[i].passage_index]
        return (first_rank[passage.resource_id], passage.ordinal, sentences[i].unit.start)

    return sorted(chosen, key=key)


def _answer(sentences: list[Sentence], passages: Sequence[ScoredPassage], language: Language) -> ParsedReply:
    """The chosen sentences as cited parts; quoted in another language than
    the question's, they come after a lead-in in its language and name their
    own (chat/quoting.py)."""
    parts: list[Part] = quoted(
        [{"text": s.text, "source": source_of(passages[s.passage_index])} for s in sentences],
        language,
        [passages[s.passage_index].language for s in sentences],
    )
    response: Reply = {"type": ResponseType.ANSWER, "parts": parts, "form": None}
    return ParsedReply(response, render_content([p["text"] for p in parts]))
