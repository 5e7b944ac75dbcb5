"""How well the retrieved passages answer a question (a turn's
answerability, on every engine), sentence by sentence: the scores the decide
step checks and the extractive engine picks its answer from.

A sentence's score (:func:`score_sentences`) mixes its meaning (cosine
similarity with the question under the workspace's embedding model), the
question's words it shares, a number range that holds (or excludes) the
question's quantity, its passage's rank, and the heading above it (see the
module doc of chat/backends/extractive.py). :func:`assess` scores a turn's
candidates once: the best score is the turn's answerability
(chat/services/turn/decide.py), each document's best sentence a candidate
subject when the question is ambiguous, and the extractive engine picks its
answer from the same scores. For a follow-up, sentences are scored against
the question and against the question with the conversation, and the two
scores averaged (measured on MTRAG-UN: it separates answerable from
unanswerable follow-ups better than either alone).
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field

import numpy as np

from chat.headings import answer_units
from chat.meaning import meaning_scale
from chat.quantities import number_fit, question_numbers
from chat.text import content_words
from languages import UNDETERMINED, detect
from retrieval.embeddings import Vector, embed_cached, get_embedder, loadable
from retrieval.search import ScoredPassage
from retrieval.selectors import passage_unit_vectors
from retrieval.unit_vectors import digest
from retrieval.units import ANSWERABLE, Unit

# Weights of the score's terms (bench/answer_quality).
MEANING_WEIGHT = 0.65
WORDS_WEIGHT = 0.30
RANK_WEIGHT = 0.05
NUMBER_BONUS = 0.15
# A sentence under a heading scores at least this mix of the heading's score and its own.
HEADING_SHARE = 0.5
# Added to the cosine of a question and a sentence in another language
# before it is calibrated (chat/meaning.py): the same meaning across two
# languages has a lower cosine than within one. bench/cross_language_chat.py
# (e5, the default threshold, eight language pairs, topics split even/odd),
# fit/held: at 0 the first citation is right 0.69/0.77, "the documents
# don't say" 0.28/0.21 of answerable questions, and 0.78/0.78 of questions
# whose passage is filtered out (its near neighbour left) are declined; at
# 0.01, 0.80/0.85, 0.15/0.11 and 0.63/0.64; at 0.02, 0.85/0.91, 0.09/0.05
# and 0.48/0.45. The sum of the three (each goal alike) peaks at 0.01 on
# both halves: past it, answers across languages are bought with answers
# from the wrong topic.
ACROSS_SHIFT = 0.01


@dataclass(frozen=True)
class Sentence:
    """A unit of a retrieved passage (see retrieval/units.py)."""

    passage_index: int  # position of its passage in the retrieved list (rank - 1)
    unit: Unit

    @property
    def text(self) -> str:
        return self.unit.text


def candidates_of(passages: Sequence[ScoredPassage]) -> list[Sentence]:
    """The units of every passage that may answer, each once (overlapping
    chunks repeat sentences: the best-ranked copy stays); a document's title
    line is a heading, not an answer (chat/headings.py)."""
    seen: set[tuple[object, str | None, str]] = set()
    out = []
    for index, passage in enumerate(passages):
        for unit in answer_units(passage.text, ordinal=passage.ordinal, title=passage.resource_title):
            key = (passage.resource_id, unit.heading, unit.text.lower())
            if unit.kind in ANSWERABLE and key not in seen:
                seen.add(key)
                out.append(Sentence(index, unit))
    return out


def score_sentences(
    question: str,
    sentences: Sequence[Sentence],
    passage_count: int,
    stored: Mapping[bytes, Vector] | None = None,
    model: str | None = None,
    languages: Sequence[str] = (),
) -> list[float]:
    """Each sentence's score (see the module doc). The vectors of the
    question, the sentences and their headings come from ``stored`` (the
    passages' unit vectors, :func:`assess` reads them) where it has them,
    else from the embedding model ``model`` (by default the configured one),
    whose cosines are scored on its calibration (chat/meaning.py).
    ``languages``: each passage's language, by index (ScoredPassage.language);
    a sentence in another language than the question's cannot share its
    words, so its meaning term takes the words term's weight as well."""
    scale = meaning_scale(model or get_embedder().model_name)
    asked_in = detect(question)
    headings = list(dict.fromkeys(s.unit.heading for s in sentences if s.unit.heading))
    [query] = embed_cached([question], side="query", model=model)
    vectors = _unit_vectors([*(s.text for s in sentences), *headings], stored or {}, model)
    heading_vectors = dict(zip(headings, vectors[len(sentences) :], strict=True))
    words = content_words(question)
    numbers = question_numbers(question)
    scores = []
    for sentence, vector in zip(sentences, vectors[: len(sentences)], strict=True):
        rank = RANK_WEIGHT * (1.0 - sentence.passage_index / max(passage_count, 1))
        written_in = languages[sentence.passage_index] if sentence.passage_index < len(languages) else ""
        across = UNDETERMINED not in (asked_in, written_in or UNDETERMINED) and asked_in != written_in
        closeness = functools.partial(_closeness, words=words, across=across)
        shift = ACROSS_SHIFT if across else 0.0
        score = closeness(scale(float(np.dot(query, vector)) + shift), text=sentence.text) + rank
        score += NUMBER_BONUS * number_fit(numbers, sentence.text)
        heading = sentence.unit.heading
        if heading:
            heading_cosine = float(np.dot(query, heading_vectors[heading]))
            topic = closeness(scale(heading_cosine + shift), text=heading) + rank
            score = max(score, HEADING_SHARE * topic + (1 - HEADING_SHARE) * score)
        scores.append(score)
    return scores


def _closeness(meaning: float, *, words: Set[str], text: str, across: bool) -> float:
    """The meaning and words terms of a score (``meaning``: the calibrated
    cosine). ``across``: a sentence in another language than the question's,
    which cannot share its words; the meaning weighs for both: on the topics set's
    cross-language pairs (e5, the default threshold) that took the answered
    share of questions over their own passage from 0.27 to 0.74, and the
    declined share over their near neighbour from 0.99 to 0.82."""
    if across:
        return (MEANING_WEIGHT + WORDS_WEIGHT) * meaning
    shared = len(words & content_words(text)) / len(words) if words else 0.0
    return MEANING_WEIGHT * meaning + WORDS_WEIGHT * shared


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


def _unit_vectors(texts: list[str], stored: Mapping[bytes, Vector], model: str | None) -> list[Vector]:
    """The vectors of units and headings (the passage side: they are compared
    with the question), from those stored with their passage
    (retrieval/unit_vectors.py), or, for the units of a passage whose vectors
    are not made yet, from the process's cache or the model."""
    found = [stored.get(digest(text)) for text in texts]
    missing = [text for text, vector in zip(texts, found, strict=True) if vector is None]
    embedded = iter(embed_cached(missing, side="passage", model=model)) if missing else iter(())
    return [vector if vector is not None else next(embedded) for vector in found]


def _stored_vectors(passages: Sequence[ScoredPassage], model: str | None) -> dict[bytes, Vector]:
    embedder = get_embedder(model)
    return passage_unit_vectors(
        passage_ids=[p.passage_id for p in passages],
        model_name=embedder.model_name,
        dimensions=embedder.dimensions,
    )


@dataclass(frozen=True)
class DocumentBest:
    """A document's best-scoring sentence."""

    resource_id: uuid.UUID
    title: str
    score: float
    sentence: str


@dataclass(frozen=True)
class Assessment:
    """A turn's candidate sentences and the scores of those scored (by index)."""

    sentences: list[Sentence]
    scores: dict[int, float]
    passages: Sequence[ScoredPassage]
    # For a follow-up, the scores against the question alone (``scores``
    # average them with those against the question with the conversation).
    alone: dict[int, float] = field(default_factory=dict)

    @property
    def best(self) -> float:
        """The answerability: the best sentence's score (0 when none)."""
        return max(self.scores.values(), default=0.0)

    def per_document(self) -> list[DocumentBest]:
        """Each document's best sentence, best first."""
        best: dict[uuid.UUID, tuple[float, int]] = {}
        for index, score in self.scores.items():
            resource_id = self.passages[self.sentences[index].passage_index].resource_id
            if resource_id not in best or score > best[resource_id][0]:
                best[resource_id] = (score, index)
        out = []
        for resource_id, (score, index) in best.items():
            passage = self.passages[self.sentences[index].passage_index]
            out.append(DocumentBest(resource_id, passage.resource_title, score, self.sentences[index].text))
        return sorted(out, key=lambda d: (-d.score, str(d.resource_id)))


def assess(
    question: str,
    passages: Sequence[ScoredPassage],
    *,
    context: str | None = None,
    model: str | None = None,
) -> Assessment:
    """Score the passages' candidate sentences for ``question`` (and, for a
    follow-up, ``context``: the question with the conversation; the two
    scores are averaged). ``model``: the embedding model the passages were
    searched with, their workspace's (``Workspace.embedding_model``; by
    default the configured one), so that the question and the units are
    compared under it, on its calibration (chat/meaning.py)."""
    sentences = candidates_of(passages)
    shortlist = _shortlist(f"{question} {context}" if context else question, sentences)
    scored = [sentences[i] for i in shortlist]
    if model is not None and not loadable(model):
        model = None  # a model no longer loadable: compared under the configured one
    stored = _stored_vectors(passages, model) if scored else {}
    languages = [p.language for p in passages]
    values = score_sentences(question, scored, len(passages), stored, model, languages)
    alone: dict[int, float] = {}
    if context and context.strip() != question.strip():
        alone = dict(zip(shortlist, values, strict=True))
        with_context = score_sentences(context, scored, len(passages), stored, model, languages)
        values = [(a + b) / 2 for a, b in zip(values, with_context, strict=True)]
    return Assessment(sentences, dict(zip(shortlist, values, strict=True)), passages, alone)
