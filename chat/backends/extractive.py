"""The extractive answer engine: the best sentences of the retrieved passages,
each cited to its passage, and nothing else.

It generates no text, so it cannot make anything up: every part of its
answer is a sentence, list item or table row of a passage retrieved for this
turn (chat/backends/sentences.py reads them out of the passage text: lines
broken mid-sentence are joined, headings and questions are told apart). It
is the embedded default (``make run``), the engine a turn falls back to when
the generative backend is unavailable (``Workspace.on_generation_unavailable``),
and fast enough (one forward pass of the embedding model over the question,
the candidate sentences and their headings) to answer in milliseconds.

Scoring a sentence (:func:`score_sentences`; weights measured with
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

Parts are read in document order, documents in retrieval's order (which
on ``bench/answer_quality`` puts a relevant document first more often than
the best sentence's document would). A workspace with no ready documents
gets a fixed answer.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from chat.backends.base import BaseBackend, ChatMessage, Generation, JsonSchema, StreamItem
from chat.backends.quantities import number_fit, question_numbers
from chat.backends.sentences import ANSWERABLE, LEAD, LISTED, STEP, Unit, segment, split_sentences
from chat.contract import Part, Reply, ResponseType
from chat.output import ParsedReply, render_content, source_of
from chat.text import content_words
from retrieval.embeddings import get_embedder
from retrieval.search import ScoredPassage

__all__ = [
    "ExtractiveBackend",
    "number_fit",
    "question_numbers",
    "score_sentences",
    "select_answer",
    "split_sentences",
]

NO_DOCUMENTS_TEXT = (
    "This workspace has no documents yet, so there is nothing to answer from. "
    "Once documents are uploaded and ready, ask again."
)
NO_ANSWER_TEXT = "I could not find an answer to this in the workspace's documents."

# Weights of the score's terms; the floor below which nothing answers.
MEANING_WEIGHT = 0.65
WORDS_WEIGHT = 0.30
RANK_WEIGHT = 0.05
NUMBER_BONUS = 0.15
# A sentence under a heading scores at least this mix of the heading's score and its own.
HEADING_SHARE = 0.5
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


@dataclass(frozen=True)
class Sentence:
    """A unit of a retrieved passage (see chat/backends/sentences.py)."""

    passage_index: int  # position of its passage in the retrieved list (rank - 1)
    unit: Unit

    @property
    def text(self) -> str:
        return self.unit.text


def candidates_of(passages: Sequence[ScoredPassage]) -> list[Sentence]:
    """The units of every passage that may answer, each once (overlapping
    chunks repeat sentences: the best-ranked copy stays)."""
    seen: set[tuple[object, str | None, str]] = set()
    out = []
    for index, passage in enumerate(passages):
        for unit in segment(passage.text):
            key = (passage.resource_id, unit.heading, unit.text.lower())
            if unit.kind in ANSWERABLE and key not in seen:
                seen.add(key)
                out.append(Sentence(index, unit))
    return out


class ExtractiveBackend(BaseBackend):
    """Answers from the retrieved passages' own sentences (see the module doc)."""

    backend_name = "extractive"
    generative = False
    supports_forms = False

    def answer(self, question: str, passages: Sequence[ScoredPassage], *, grounded: bool) -> ParsedReply:
        """The reply to ``question`` from ``passages`` (ranked best first)."""
        if not grounded:
            return _plain(NO_DOCUMENTS_TEXT)
        sentences = candidates_of(passages)
        shortlist = _shortlist(question, sentences)
        scored = [sentences[i] for i in shortlist]
        scores = dict(zip(shortlist, score_sentences(question, scored, len(passages)), strict=True))
        chosen = select_answer(sentences, scores, passages)
        if not chosen:
            return _plain(NO_ANSWER_TEXT)
        return _answer([sentences[i] for i in chosen], passages)

    # A prompt is never built for this engine: the turn service calls answer().
    def generate(
        self,
        messages: list[ChatMessage],
        *,
        schema: JsonSchema,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Generation:
        raise TypeError("the extractive engine does not generate; call answer()")

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[StreamItem]:
        raise TypeError("the extractive engine does not generate; call answer()")


def score_sentences(question: str, sentences: Sequence[Sentence], passage_count: int) -> list[float]:
    """Each sentence's score (see the module doc), from one forward pass over
    the question, the sentences and their headings."""
    headings = list(dict.fromkeys(s.unit.heading for s in sentences if s.unit.heading))
    query, *vectors = _embed([question, *(s.text for s in sentences), *headings])
    heading_vectors = dict(zip(headings, vectors[len(sentences) :], strict=True))
    words = content_words(question)
    numbers = question_numbers(question)
    scores = []
    for sentence, vector in zip(sentences, vectors[: len(sentences)], strict=True):
        rank = RANK_WEIGHT * (1.0 - sentence.passage_index / max(passage_count, 1))
        score = _closeness(query, vector, words, sentence.text) + rank
        score += NUMBER_BONUS * number_fit(numbers, sentence.text)
        heading = sentence.unit.heading
        if heading:
            topic = _closeness(query, heading_vectors[heading], words, heading) + rank
            score = max(score, HEADING_SHARE * topic + (1 - HEADING_SHARE) * score)
        scores.append(score)
    return scores


def _closeness(query: list[float], vector: list[float], words: set[str], text: str) -> float:
    """The meaning and words terms of a score."""
    meaning = sum(a * b for a, b in zip(query, vector, strict=True))
    shared = len(words & content_words(text)) / len(words) if words else 0.0
    return MEANING_WEIGHT * meaning + WORDS_WEIGHT * shared


def select_answer(
    sentences: Sequence[Sentence], scores: dict[int, float], passages: Sequence[ScoredPassage]
) -> list[int]:
    """The indices of the answer's parts in ``sentences``, in reading order;
    none when nothing answers. ``scores`` holds the scored sentences' scores."""
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
SHORTLIST_BY_WORDS = 16
SHORTLIST_FROM_BEST_PASSAGE = 8


def _shortlist(question: str, sentences: list[Sentence]) -> list[int]:
    """At most 24 candidates' indices, in order: the embedding model runs
    once per sentence, so a turn over long passages stays fast."""
    if len(sentences) <= SHORTLIST_BY_WORDS + SHORTLIST_FROM_BEST_PASSAGE:
        return list(range(len(sentences)))
    words = content_words(question)

    def shared(s: Sentence) -> int:
        return len(words & content_words(f"{s.unit.heading or ''} {s.text}"))

    by_words = sorted(
        range(len(sentences)), key=lambda i: (-shared(sentences[i]), sentences[i].passage_index, i)
    )[:SHORTLIST_BY_WORDS]
    best = [i for i, s in enumerate(sentences) if s.passage_index == 0][:SHORTLIST_FROM_BEST_PASSAGE]
    return sorted(set(by_words) | set(best))


_vectors: OrderedDict[tuple[int, str], list[float]] = OrderedDict()
_vectors_lock = threading.Lock()
VECTOR_CACHE_SIZE = 20_000


def _embed(texts: list[str]) -> list[list[float]]:
    """Sentence vectors, the recent ones from a per-process cache (the same
    passages answer many questions), keyed by the embedder that made them."""
    embedder = get_embedder()
    keys = [(id(embedder), text) for text in texts]
    with _vectors_lock:
        missing = [key for key in dict.fromkeys(keys) if key not in _vectors]
    fresh = (
        dict(zip(missing, embedder.embed_documents([t for _, t in missing]), strict=True)) if missing else {}
    )
    with _vectors_lock:
        _vectors.update(fresh)
        out = []
        for key in keys:
            vector = fresh.get(key) or _vectors.get(key)
            if vector is None:  # evicted by another thread meanwhile
                vector = embedder.embed_documents([key[1]])[0]
            else:
                _vectors.move_to_end(key)
            out.append(vector)
        while len(_vectors) > VECTOR_CACHE_SIZE:
            _vectors.popitem(last=False)
    return out


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


def _answer(sentences: list[Sentence], passages: Sequence[ScoredPassage]) -> ParsedReply:
    parts: list[Part] = [{"text": s.text, "source": source_of(passages[s.passage_index])} for s in sentences]
    response: Reply = {"type": ResponseType.ANSWER, "parts": parts, "form": None}
    return ParsedReply(response, render_content([p["text"] for p in parts]))


def _plain(text: str) -> ParsedReply:
    response: Reply = {"type": ResponseType.ANSWER, "parts": [{"text": text, "source": None}], "form": None}
    return ParsedReply(response, text)
