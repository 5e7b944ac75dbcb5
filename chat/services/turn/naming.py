"""What a question names, and whether the retrieved documents cover it.

Asking back "which one do you mean?" is right when the question names no
subject and the documents answer it for several; it is wrong when the
question names a subject none of them is about: "How long is the
dishwasher warranty?" over manuals of a kettle, a toaster and a blender
is answered "the documents don't say", not with a form of the other
products (chat/services/turn/decide.py).

A question's **names** are the words by which it refers to a particular
thing, read with its language's rules (languages/<code>/conversation.py), not a list of
things:

* the word a pointing word or article introduces ("the dishwasher", "the
  Bosch", "this fund": the language's ``pointer``), after the words that
  say which of a thing's values is asked ("the maximum daily dose", "the
  recommended dose" name no maximum: ``qualifiers``), unless it is a kind
  of thing that names nothing by itself ("the product": ``kinds``, the
  unresolved reference clarify.py asks about) or a word that refers back
  ("the other": ``anaphora``);
* and when the phrase is pinned down ("the maximum daily dose of aspirin",
  "the dog named Rex": ``pinned``), the word after the pin;
* a proper name inside the question (the language's ``proper_name``, not a
  sentence's first word): "in Argentina";
* a word of letters and digits, as models and codes are written: "K9",
  "401k"; a number of four digits or more, as years and codes are: "the
  2019 policy";
* in a language whose script has no capitals (Persian, Arabic: no
  ``proper_name``), when the documents answer alike for their own subjects
  (decide.py asks only then), any word of the question that no passage has
  — neither as a word nor inside one, as an article or a preposition is
  written onto a word ("الضمان", "لمدة") — other than the language's
  qualifiers, kinds and words that refer back: the question's wording is
  the documents', so a word they never use names a subject they lack
  ("ناپروکسن" over the leaflets of three other drugs). A question worded
  with a synonym none of them uses reads as one naming another subject.

A name is **covered** when one of the retrieved passages, or its
document's title, has the word (as chat/text.py compares words).

What a turn asks with (:func:`turn_asked`, for the extractive engine's
choice of sentences: chat/backends/focus.py): the question's own words, and
for a follow-up its earlier questions' words, and whether it leans on
them (followup_search.py: "it", "and …") and names nothing itself, so that
its subject is the conversation's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from chat.backends.focus import Asked
from chat.services.turn.followup_search import leans_on_conversation
from chat.services.turn.references import is_kind, noun_phrase, unresolved_reference
from chat.text import content_words
from languages import Language, normalize
from languages.base import NEVER
from retrieval.search import ScoredPassage
from retrieval.units import WORD

# Where a sentence starts inside a question (its first word is capitalised
# whatever it is).
_SENTENCE_START = re.compile(r"(?:^|[.!?\u061f]\s+)\W*")
# A number this long names (a year, a code); a word this long is compared
# inside another (an article or preposition written onto it).
_LONG_NUMBER = 4
_MIN_WRITTEN = 3
# A word from where it starts (the one after a pin).
_WORD_AT = re.compile(r"[^\W\d_][\w'\u2019-]*")


def question_names(question: str, language: Language) -> frozenset[str]:
    """The content words by which ``question`` names particular things (rules above)."""
    text = normalize(question, language.code)
    rules = language.conversation
    found = [name for match in rules.pointer.finditer(text) for name in _pointed_names(text, match, language)]
    starts = {m.end() for m in _SENTENCE_START.finditer(text)}
    found.extend(m.group(0) for m in rules.proper_name.finditer(text) if m.start() not in starts)
    found.extend(word for word in WORD.findall(text) if _letters_and_digits(word) or _long_number(word))
    return frozenset().union(*(content_words(word) for word in found)) if found else frozenset()


def turn_asked(
    question: str, earlier_questions: Sequence[str], language: Language, *, follow_up: bool
) -> Asked:
    """The words ``question`` asks with (above); ``follow_up``: the turn is
    searched and scored with its conversation (followup_search.py)."""
    own = content_words(question)
    if not follow_up:
        return Asked(own)
    conversation = content_words(" ".join(earlier_questions)) - own
    leans = leans_on_conversation(question, language)
    from_conversation = leans and not question_names(question, language)
    return Asked(own, conversation, leans=leans, from_conversation=from_conversation)


def names_another_subject(
    question: str, earlier_questions: Sequence[str], language: Language, passages: Sequence[ScoredPassage]
) -> bool:
    """Whether ``question`` names a subject that none of the retrieved
    documents covers (rules above). A question that points at an unnamed
    subject ("this animal") is asked back whatever else it names (clarify.py)."""
    return bool(uncovered_subject(question, earlier_questions, language, passages))


def uncovered_subject(
    question: str, earlier_questions: Sequence[str], language: Language, passages: Sequence[ScoredPassage]
) -> frozenset[str]:
    """The words by which ``question`` names a subject that none of the
    retrieved documents covers (empty: none, as :func:`names_another_subject`)."""
    if unresolved_reference(question, earlier_questions, language):
        return frozenset()
    return uncovered(question_names(question, language), passages) | _unwritten(question, language, passages)


def _unwritten(question: str, language: Language, passages: Sequence[ScoredPassage]) -> frozenset[str]:
    """In a script without capitals, the question's words that no passage
    has, as a word or inside one (rules above)."""
    if language.conversation.proper_name.pattern != NEVER.pattern:
        return frozenset()
    asked = {word for word in content_words(question) if len(word) >= _MIN_WRITTEN and _names(word, language)}
    if not asked:
        return frozenset()
    written = set().union(*(content_words(p.text) | content_words(p.resource_title) for p in passages))
    return frozenset(
        w
        for w in asked
        if not any(w in other or other in w for other in written if len(other) >= _MIN_WRITTEN)
    )


def uncovered(names: Iterable[str], passages: Sequence[ScoredPassage]) -> frozenset[str]:
    """The ``names`` (content words) that no passage nor its document's title has."""
    missing = set(names)
    for passage in passages:
        if not missing:
            break
        missing -= content_words(passage.text) | content_words(passage.resource_title)
    return frozenset(missing)


def _pointed_names(text: str, match: re.Match[str], language: Language) -> list[str]:
    """The words by which the phrase a pointing word opens (``match``) names
    things (rules above): its first word that is no qualifier, and the word
    after its pin."""
    rules = language.conversation
    words, ends = noun_phrase(text, match, language)
    head = next((word for word in words if word.lower() not in rules.qualifiers), None)
    found = [head] if head and _names(head, language) else []
    pin = next((p for end in ends if (p := rules.pinned.match(text, end)) is not None), None)
    # "of the microwave", "of this product": that pointing word's own match reads it.
    after = _WORD_AT.match(text, pin.end() - 1) if pin else None
    return [*found, after.group(0)] if after and _names(after.group(0), language) else found


def _names(word: str, language: Language) -> bool:
    """Whether ``word`` may name a thing: no stop word, no word that refers
    back, no kind of thing, no qualifier."""
    rules = language.conversation
    lower = word.lower()
    if lower in rules.stop_words or lower in rules.anaphora or lower in rules.qualifiers:
        return False
    return not is_kind(lower, language)


def _long_number(word: str) -> bool:
    return word.isdigit() and len(word) >= _LONG_NUMBER


def _letters_and_digits(word: str) -> bool:
    return any(c.isdigit() for c in word) and any(c.isalpha() for c in word)
