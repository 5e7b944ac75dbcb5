"""The extractive answer engine: the best sentences of the retrieved passages,
each cited to its passage, and nothing else.

It generates no text, so it cannot make anything up: every part of its
answer is a sentence (or a line) copied from a passage retrieved for this
turn. It is the embedded default (``make run``), the engine a turn falls back
to when the generative backend is unavailable
(``Workspace.on_generation_unavailable``), and fast enough (one forward pass
of the embedding model over the question and the passages' sentences) to
answer in milliseconds.

Scoring a sentence (weights measured with ``bench/answer_quality``):

* **meaning**: cosine similarity of the question and the sentence under the
  embedding model the workspace already uses;
* **words**: the share of the question's content words the sentence
  contains (crude stemming; stop words ignored);
* **numbers**: a question about a quantity ("a 75 year old") boosts a
  sentence whose stated range holds it ("over 70") and demotes one whose
  range excludes it ("under 65");
* **rank**: a small prior for the passage's retrieval rank.

When no sentence is close enough to the question the engine says so plainly,
without a source; a workspace with no ready documents gets a fixed answer.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from chat.backends.base import BaseBackend, ChatMessage, Generation, JsonSchema, StreamItem
from chat.contract import Part, Reply, ResponseType
from chat.output import ParsedReply, render_content, source_of
from chat.text import STOP_WORDS, WORD, content_words
from retrieval.embeddings import get_embedder
from retrieval.search import ScoredPassage

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
MIN_SCORE = 0.30
# Further sentences join the best one when they score this close to it.
KEEP_RATIO = 0.85
MAX_PARTS = 3
MAX_CHARS = 900
MAX_SENTENCE_CHARS = 600

_ABBREVIATIONS = frozenset(
    [
        "e.g",
        "i.e",
        "et",
        "al",
        "etc",
        "fig",
        "figs",
        "vs",
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "no",
        "vol",
        "approx",
        "ca",
        "cf",
        "resp",
        "mg",
        "ml",
        "kg",
        "mmhg",
        "dept",
    ]
)
_BOUNDARY = re.compile(r"(?<=[.!?\u2026])[\"')\]\u201d\u2019]*\s+(?=[\"'(\[\u201c\u2018]?[A-Z0-9])")
_BULLET = re.compile(r"^\s*(?:[-*\u2022\u2023\u25e6\u2043]|\d{1,3}[.)]|[a-z][.)])\s+")


@dataclass(frozen=True)
class Sentence:
    passage_index: int  # position of its passage in the retrieved list (rank - 1)
    start: int  # offset in the passage text, for document order
    text: str


def split_sentences(text: str) -> list[tuple[int, str]]:
    """``(offset, sentence)`` pairs of a passage: lines first (list items,
    table rows and headings are units of their own), then sentence ends."""
    out: list[tuple[int, str]] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        line_start = offset
        offset += len(line)
        start = 0
        for match in _BOUNDARY.finditer(line):
            candidate = line[start : match.start()]
            if _ends_with_abbreviation(candidate):
                continue
            _append(out, line_start + start, candidate)
            start = match.end()
        _append(out, line_start + start, line[start:])
    return out


def _ends_with_abbreviation(text: str) -> bool:
    words = text.rstrip().rstrip(".").rsplit(None, 1)
    return bool(words) and words[-1].lower().strip("(") in _ABBREVIATIONS


def _append(out: list[tuple[int, str]], start: int, raw: str) -> None:
    stripped = raw.strip()
    if not stripped:
        return
    lead = len(raw) - len(raw.lstrip())
    bullet = _BULLET.match(stripped)
    if bullet:
        lead += bullet.end()
        stripped = stripped[bullet.end() :]
    text = " ".join(stripped.split())
    # Headings and fragments carry no answer on their own.
    if len(WORD.findall(text.lower())) < 3:
        return
    out.append((start + lead, text[:MAX_SENTENCE_CHARS]))


# --- numbers ----------------------------------------------------------------

_NUMBER = r"(\d+(?:\.\d+)?)"
_AT_LEAST = re.compile(
    rf"(?:over|above|older than|more than|greater than|at least|>=?|\u2265)\s*(?:the age of\s*)?{_NUMBER}"
    rf"|{_NUMBER}\s*(?:\+|(?:years?\s*)?(?:or|and)\s*(?:over|older|above|more))",
    re.IGNORECASE,
)
_AT_MOST = re.compile(
    rf"(?:under|below|younger than|less than|at most|up to|<=?|\u2264)\s*(?:the age of\s*)?{_NUMBER}"
    rf"|{_NUMBER}\s*(?:years?\s*)?(?:or|and)\s*(?:under|younger|below|less)",
    re.IGNORECASE,
)
_BETWEEN = re.compile(rf"(?:between\s*)?{_NUMBER}\s*(?:to|-|\u2013|and)\s*{_NUMBER}", re.IGNORECASE)
# A number in the question, and the unit that follows it ("75 year old" -> year).
_QUESTION_NUMBER = re.compile(r"(?<![\d/.:])(\d{1,4}(?:\.\d+)?)(?![\d/:])\s*-?\s*([a-z%]+)?", re.IGNORECASE)
# What follows a number in a sentence: "/80 mmHg", " mg", "%", " years".
_UNIT_AFTER = re.compile(r"\s*(?:/\s*\d+(?:\.\d+)?)?\s*-?\s*([a-z%\u00b5]+)?", re.IGNORECASE)
_UNIT_ALIASES = {"yo": "year", "yr": "year", "yrs": "year", "years": "year", "aged": "year", "old": "year"}


def _unit(word: str | None) -> str | None:
    if not word:
        return None
    word = word.lower()
    word = _UNIT_ALIASES.get(word, word)
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def question_numbers(question: str) -> list[tuple[float, str | None]]:
    """The quantities a question is about, with their unit when one follows."""
    out = []
    for number, word in _QUESTION_NUMBER.findall(question):
        unit = _unit(word)
        out.append((float(number), unit if unit not in STOP_WORDS else None))
    return out


def number_fit(quantities: Sequence[tuple[float, str | None]], sentence: str) -> int:
    """+1 when a range stated in the sentence holds a quantity of the question,
    -1 when the sentence's ranges (of a compatible unit) all exclude it, 0
    when the sentence states no such range. A range whose number carries
    another unit ("below 130/80 mmHg" for a question about years) is about
    something else and is ignored."""
    if not quantities:
        return 0
    ranges: list[tuple[float, float, str | None]] = []
    for match in _BETWEEN.finditer(sentence):
        low, high = float(match.group(1)), float(match.group(2))
        if low < high and not _is_ratio(sentence, match):
            ranges.append((low, high, _unit_after(sentence, match.end())))
    ranges += [(_first(m), math.inf, _unit_after(sentence, m.end())) for m in _AT_LEAST.finditer(sentence)]
    ranges += [(-math.inf, _first(m), _unit_after(sentence, m.end())) for m in _AT_MOST.finditer(sentence)]
    verdicts = [
        low <= number <= high
        for number, unit in quantities
        for low, high, range_unit in ranges
        if range_unit is None or unit is None or range_unit == unit
    ]
    if not verdicts:
        return 0
    return 1 if any(verdicts) else -1


def _first(match: re.Match[str]) -> float:
    return float(next(g for g in match.groups() if g is not None))


def _unit_after(sentence: str, end: int) -> str | None:
    match = _UNIT_AFTER.match(sentence, end)
    word = match.group(1) if match else None
    unit = _unit(word)
    # A following word that is not a unit ("Adults under 65: aim for"): none.
    if unit is None or unit in STOP_WORDS or (unit not in _KNOWN_UNITS and len(unit) > 4):
        return None
    return unit


_KNOWN_UNITS = frozenset(
    {"year", "month", "week", "day", "hour", "minute", "mmhg", "mmol", "percent", "unit", "dose"}
)


def _is_ratio(sentence: str, match: re.Match[str]) -> bool:
    # "130/80" and "2-3 times" style pairs are not ranges of the question's quantity.
    return "/" in sentence[max(0, match.start() - 1) : match.end() + 1]


# --- the engine ---------------------------------------------------------------


class ExtractiveBackend(BaseBackend):
    """Answers from the retrieved passages' own sentences (see the module doc)."""

    backend_name = "extractive"
    generative = False
    supports_forms = False

    def answer(self, question: str, passages: Sequence[ScoredPassage], *, grounded: bool) -> ParsedReply:
        """The reply to ``question`` from ``passages`` (ranked best first)."""
        if not grounded:
            return _plain(NO_DOCUMENTS_TEXT)
        sentences = [
            Sentence(index, start, text)
            for index, passage in enumerate(passages)
            for start, text in split_sentences(passage.text)
        ]
        sentences = _shortlist(question, _unique(sentences))
        if not sentences:
            return _plain(NO_ANSWER_TEXT)
        scores = self._scores(question, sentences, len(passages))
        best = max(scores)
        if best < MIN_SCORE:
            return _plain(NO_ANSWER_TEXT)
        ranked = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))
        chosen: list[int] = []
        total = 0
        for i in ranked:
            if len(chosen) == MAX_PARTS or scores[i] < max(MIN_SCORE, KEEP_RATIO * best):
                break
            if chosen and total + len(sentences[i].text) > MAX_CHARS:
                continue
            chosen.append(i)
            total += len(sentences[i].text)
        return _answer([sentences[i] for i in _document_order(chosen, sentences, passages)], passages)

    def _scores(self, question: str, sentences: list[Sentence], passage_count: int) -> list[float]:
        query, *vectors = _embed([question, *(s.text for s in sentences)])
        words = content_words(question)
        numbers = question_numbers(question)
        scores = []
        for sentence, vector in zip(sentences, vectors, strict=True):
            meaning = sum(a * b for a, b in zip(query, vector, strict=True))
            shared = len(words & content_words(sentence.text)) / len(words) if words else 0.0
            rank = 1.0 - sentence.passage_index / max(passage_count, 1)
            fit = number_fit(numbers, sentence.text)
            scores.append(
                MEANING_WEIGHT * meaning + WORDS_WEIGHT * shared + RANK_WEIGHT * rank + NUMBER_BONUS * fit
            )
        return scores

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


# Sentences embedded per answer: those that share most words with the
# question, and the best passage's own (an answer may share no word).
SHORTLIST_BY_WORDS = 16
SHORTLIST_FROM_BEST_PASSAGE = 8


def _shortlist(question: str, sentences: list[Sentence]) -> list[Sentence]:
    """At most 24 candidates, in their original order: the embedding model
    runs once per sentence, so a turn over long passages stays fast."""
    if len(sentences) <= SHORTLIST_BY_WORDS + SHORTLIST_FROM_BEST_PASSAGE:
        return sentences
    words = content_words(question)
    by_words = sorted(
        range(len(sentences)),
        key=lambda i: (-len(words & content_words(sentences[i].text)), sentences[i].passage_index, i),
    )[:SHORTLIST_BY_WORDS]
    best = [i for i, s in enumerate(sentences) if s.passage_index == 0][:SHORTLIST_FROM_BEST_PASSAGE]
    return [sentences[i] for i in sorted(set(by_words) | set(best))]


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


def _unique(sentences: list[Sentence]) -> list[Sentence]:
    # Overlapping chunks repeat sentences: keep the first (best-ranked) copy.
    seen: set[str] = set()
    out = []
    for sentence in sentences:
        key = sentence.text.lower()
        if key not in seen:
            seen.add(key)
            out.append(sentence)
    return out


def _document_order(
    chosen: list[int], sentences: list[Sentence], passages: Sequence[ScoredPassage]
) -> list[int]:
    """Within a document, by position; documents in order of their best passage."""
    first_rank: dict[object, int] = {}
    for index, passage in enumerate(passages):
        first_rank.setdefault(passage.resource_id, index)

    def key(i: int) -> tuple[int, int, int]:
        passage = passages[sentences[i].passage_index]
        return (first_rank[passage.resource_id], passage.ordinal, sentences[i].start)

    return sorted(chosen, key=key)


def _answer(sentences: list[Sentence], passages: Sequence[ScoredPassage]) -> ParsedReply:
    parts: list[Part] = [{"text": s.text, "source": source_of(passages[s.passage_index])} for s in sentences]
    response: Reply = {"type": ResponseType.ANSWER, "parts": parts, "form": None}
    return ParsedReply(response, render_content([p["text"] for p in parts]))


def _plain(text: str) -> ParsedReply:
    response: Reply = {"type": ResponseType.ANSWER, "parts": [{"text": text, "source": None}], "form": None}
    return ParsedReply(response, text)
