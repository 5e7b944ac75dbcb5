"""Asking back: when a question could mean several subjects, a form that
asks which one, instead of a guess.

Two signals, each measured on the MTRAG-UN development split
(``bench/conversation_quality.py``):

* **An unresolved reference.** The question points at something the
  conversation never named: "this animal", "the actor", "the country's
  stadium", "این کشور" — a demonstrative or "the" before a kind of thing
  (the turn's language's ``kinds``, languages/<code>/conversation.py)
  whose words appear nowhere earlier in the conversation or in the question
  itself, and that no name or "of …" pins down (references.py); asked
  unless the phrase's other words name one of the candidates, or the
  conversation named the best one by a word only it has.
* **Evidence that answers differently per subject.** Each document's own
  naming words set aside (its title's, its metadata's, the names it
  repeats: subjects.py), the best sentences of two or more documents say
  the same kind of thing (``PARALLEL_OVERLAP``) or answer it with the same
  of its words (``SAME_ANSWER_WORDS``), and answer the question
  almost equally well (``AMBIGUITY_MARGIN``), or the documents are the
  same kind of document (``subjects.DOCUMENT_OVERLAP``) and each answers
  (``REFERENCE_FLOOR``); and the question (a question, not a statement;
  with the conversation) names none of their distinguishing names: "How
  long is the warranty?" with a kettle's and a toaster's manual, whether
  their sentences say "The Kettle K1 comes with …" or "The warranty …".
  One it names is answered from its document (:func:`named_subject`).

The form has one ``select`` field whose options are the candidate
documents — every one of them, up to the contract's bound on a field's
options — labelled by their titles (or, for a document whose title has no
words, its best sentence), cut at a word boundary when long, each carrying
the document's id as its value (``choices``); it asks in the question's
language, and its text is the question followed by the options as a
numbered list. The client answers with an ordinary message; when it chooses
one of the options (choice.py), the turn answers the question asked before
the form, from that document only.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chat import output
from chat.contract import DecisionReason, Form, FormChoice, Part, Reply, ResponseType
from chat.output import ParsedReply
from chat.services.turn.choice import FIELD_NAME, labels_told_apart, numbered
from chat.services.turn.references import is_kind, said_words, unresolved_reference
from chat.services.turn.subjects import NO_WORDS, DocumentWords, has_digit, parallel_documents
from chat.text import content_words
from languages import ENGLISH, Language, normalize
from resources.titles import shorten

# The English question back (every language's: languages/<code>/texts.py).
CLARIFY_QUESTION = ENGLISH.texts.which_one
# Every candidate is an option (a select may be long), up to the contract's
# bound on a field's options.
MAX_OPTIONS = output.MAX_OPTIONS
# A label longer than this is cut at a word boundary (resources.titles.shorten),
# unless two labels would then be the same: those are cut at the contract's bound.
MAX_LABEL_CHARS = 80
# Documents whose best sentences score within this of the best are equally good answers.
AMBIGUITY_MARGIN = 0.07
# Two best sentences state the same kind of fact about different subjects
# when, their titles' own words aside, they share this much of their words
# (and are not the same words): "The Kettle K1 has a two-year warranty" /
# "The Toaster T2 has a one-year warranty".
PARALLEL_OVERLAP = 0.7
# Or when each has the same of the question's words, at least this many
# (and half of them): both answer it, each for its subject.
SAME_ANSWER_WORDS = 2
# A question that points at an unnamed subject asks back when two documents
# score at least this (below the answerability threshold: such a question
# retrieves poorly because its subject is missing).
REFERENCE_FLOOR = 0.2


@dataclass(frozen=True)
class Candidate:
    """A document that could be the subject: its best sentence and score."""

    resource_id: uuid.UUID
    title: str
    score: float
    sentence: str
    # Its own naming words and its shape (subjects.py); empty: its title's words only.
    words: DocumentWords = NO_WORDS

    @property
    def names(self) -> frozenset[str]:
        """The words by which the document names its subject."""
        return content_words(self.title) | self.words.names

    @property
    def name(self) -> str:
        """What the document is called: its title, or for a title without
        words (an id, a date) its best sentence."""
        title = " ".join(self.title.split())
        if any(c.isalpha() for c in title) and content_words(title):
            return title
        return " ".join(self.sentence.split())

    @property
    def label(self) -> str:
        """The name as an option shows it: cut at a word boundary when long."""
        return shorten(self.name, MAX_LABEL_CHARS)


def ambiguous(
    question: str,
    earlier_questions: Sequence[str],
    candidates: Sequence[Candidate],
    *,
    threshold: float,
    language: Language,
) -> list[Candidate]:
    """The candidates to ask about (two or more), or ``[]`` to answer.

    ``candidates``: each document's best sentence, best first; ``language``:
    the turn's.
    """
    pointed = _pointed(question, earlier_questions, candidates, language)
    if pointed:
        return pointed
    if not candidates or not is_question(question, language):
        return []
    lead = candidates[0]
    if lead.score < REFERENCE_FLOOR:
        return []
    asked = said_words(question)
    alike = [c for c in candidates[1:] if _alike(lead, c, threshold, asked=asked)]
    close = _distinct([lead, *alike])
    if len(close) < 2 or _named(question, earlier_questions, close, apart=True):
        return []
    return close[:MAX_OPTIONS]


def named_subject(
    question: str, earlier_questions: Sequence[str], candidates: Sequence[Candidate], *, threshold: float
) -> Candidate | None:
    """The one document, among those that answer alike for their own
    subjects (:func:`_alike`), whose subject the question names — by a word
    of its names no other of them has (the question's own words first, then
    the conversation's) — or None."""
    if not candidates:
        return None
    # Alike by the narrower tests (no ``asked``): answering from one document
    # is the narrower reply, kept to the surer signals; read as a form reads
    # them (with the question's words) when the question names by a number
    # ("the Aero 16" beside "the Aero 14", their weights worded apart: the
    # fresh families of bench/parallel_documents.py). Always so, one MTRAG-UN
    # follow-up was kept to one of its two relevant documents.
    lead = candidates[0]
    group = _distinct([lead, *(c for c in candidates[1:] if _alike(lead, c, threshold))])
    asked = said_words(question)
    if len(group) < 2 and any(has_digit(word) for word in asked):
        group = _distinct([lead, *(c for c in candidates[1:] if _alike(lead, c, threshold, asked=asked))])
    if len(group) < 2:
        return None
    names = [c.names for c in group]
    own = [words - set().union(*(t for j, t in enumerate(names) if j != i)) for i, words in enumerate(names)]
    for text in (question, " ".join(earlier_questions)):
        asked = said_words(text)
        named = [c for c, words in zip(group, own, strict=True) if words & asked]
        if named:
            return named[0] if len(named) == 1 else None
    return None


def _alike(
    lead: Candidate, other: Candidate, threshold: float, *, asked: frozenset[str] | None = None
) -> bool:
    """Whether ``other`` answers as ``lead`` does, for its own subject: its
    best sentence says the same kind of thing and scores as well (both
    answerable), or the two are the same kind of document and it scores
    ``REFERENCE_FLOOR``; below the threshold, both. Asking back (``asked``,
    the question's words, given), also when the two sentences answer it
    with the same of its words, and the documents' shapes compared with
    their numbers aside (subjects.py)."""
    wide = asked is not None
    sentences = _parallel(lead, other) or (wide and _same_answer(lead, other, asked or frozenset()))
    documents = (
        parallel_documents(lead.words, other.words, numbers=not wide) and other.score >= REFERENCE_FLOOR
    )
    if lead.score < threshold:
        return sentences and documents
    return (sentences and other.score >= max(threshold, lead.score - AMBIGUITY_MARGIN)) or documents


def _named(
    question: str, earlier_questions: Sequence[str], candidates: Sequence[Candidate], *, apart: bool = False
) -> bool:
    """Whether the question (with the conversation) names one of the
    candidates' subjects, or (``apart``) the candidates cannot be told apart by name."""
    asked = said_words(" ".join([question, *earlier_questions]))
    names = [c.names for c in candidates]
    for index, words in enumerate(names):
        others = set().union(*(t for i, t in enumerate(names) if i != index))
        distinguishing = words - others
        if (apart and not distinguishing) or distinguishing & asked:
            return True  # a subject the question cannot be told apart by, or one it names
    return False


def _pointed(
    question: str, earlier_questions: Sequence[str], candidates: Sequence[Candidate], language: Language
) -> list[Candidate]:
    """The candidates to ask about for a question that points at an unnamed
    subject (two or more scoring ``REFERENCE_FLOOR``), or ``[]``: none when
    the pointing phrase itself names one of them ("the bronze plan")."""
    phrase = unresolved_reference(question, earlier_questions, language)
    if not phrase:
        return []
    pointed = _distinct([c for c in candidates if c.score >= REFERENCE_FLOOR])[:MAX_OPTIONS]
    # The phrase's kind of thing says what is meant, not which one ("this
    # credit card" names none of several documents about cards; "the bronze
    # plan" names one by "bronze"); the conversation resolves the reference
    # when it named the best candidate by a word only it has ("Fairy Tail",
    # then "the video game").
    qualifiers = " ".join(w for w in phrase.split() if not is_kind(w.lower(), language))
    if (
        len(pointed) < 2
        or _named(qualifiers, [], pointed)
        or _lead_named(pointed, earlier_questions, language)
    ):
        return []
    return pointed


def _lead_named(
    candidates: Sequence[Candidate], earlier_questions: Sequence[str], language: Language
) -> bool:
    """Whether the conversation named the best of ``candidates`` by a word
    of its names that no other of them has, kinds of things aside."""
    others = set().union(*(c.names for c in candidates[1:]))
    own = {w for w in candidates[0].names - others if not is_kind(w, language)}
    return bool(own & said_words(" ".join(earlier_questions)))


def ask_reason(
    question: str, earlier_questions: Sequence[str], candidates: Sequence[Candidate], language: Language
) -> tuple[DecisionReason, dict[str, Any]]:
    """Why :func:`ambiguous` asks back over ``candidates`` (the same
    arguments), with its own figures: the question's pointing phrase
    (``reference``) and the floor its candidates pass, or the margin within
    which parallel answers score."""
    if _pointed(question, earlier_questions, candidates, language):
        phrase = unresolved_reference(question, earlier_questions, language)
        return DecisionReason.UNRESOLVED_REFERENCE, {"reference": phrase, "floor": REFERENCE_FLOOR}
    return DecisionReason.PARALLEL_CANDIDATES, {"margin": AMBIGUITY_MARGIN, "overlap": PARALLEL_OVERLAP}


def is_question(text: str, language: Language) -> bool:
    """Whether ``text`` asks (a question mark, or a question's first word in
    ``language``, the turn's)."""
    if text.rstrip().endswith(("?", "\u061f")):
        return True
    return language.conversation.question_start.match(normalize(text, language.code)) is not None


def _distinct(candidates: Sequence[Candidate]) -> list[Candidate]:
    seen: set[str] = set()
    out = []
    for candidate in candidates:
        key = candidate.name.casefold()
        if key not in seen:
            seen.add(key)
            out.append(candidate)
    return out


def _parallel(first: Candidate, other: Candidate) -> bool:
    """Whether two documents' best sentences say the same kind of thing about
    their own subjects (rule above)."""
    own = (first.names ^ other.names) | {""}
    a = content_words(first.sentence) - own
    b = content_words(other.sentence) - own
    if not a or not b or a == b:
        return False
    return len(a & b) / min(len(a), len(b)) >= PARALLEL_OVERLAP


def _same_answer(first: Candidate, other: Candidate, asked: frozenset[str]) -> bool:
    """Whether two documents' best sentences answer the question with the
    same of its words, however else they are worded: "To reset the password
    of the Router R1, hold …" and "The administrator password of the Router
    R2 is reset by …" for "How do I reset the password?". Their names aside,
    the words each shares with the question are the same, at least
    ``SAME_ANSWER_WORDS`` of them and half the question's (the rest may name
    a subject neither covers: naming.py)."""
    question = asked - first.names - other.names
    shared = content_words(first.sentence) & question
    if len(shared) < SAME_ANSWER_WORDS or 2 * len(shared) < len(question):
        return False
    return shared == content_words(other.sentence) & question


def clarification_reply(candidates: Sequence[Candidate], language: Language = ENGLISH) -> ParsedReply:
    """A form with one ``select`` of the candidates, asked in ``language``:
    each option labelled (``options``) and carrying its document's id
    (``choices``); the text is the question and the options numbered."""
    labels = option_labels(candidates)
    choices: list[FormChoice] = [
        {"value": str(c.resource_id), "label": label} for c, label in zip(candidates, labels, strict=True)
    ]
    form: Form = {
        "title": language.texts.form_title,
        "fields": [
            {
                "name": FIELD_NAME,
                "label": language.texts.which_one,
                "type": "select",
                "required": True,
                "options": labels,
                "choices": choices,
            }
        ],
    }
    parts: list[Part] = [{"text": language.texts.which_one, "source": None}]
    response: Reply = {"type": ResponseType.FORM, "parts": parts, "form": form}
    return ParsedReply(response, numbered(language.texts.which_one, labels))


def option_labels(candidates: Sequence[Candidate]) -> list[str]:
    """The candidates' labels, told apart (choice.labels_told_apart)."""
    return labels_told_apart([c.label for c in candidates], [c.name for c in candidates])
