"""What the conversation knows of a language: its rules and its built-in texts.

Each language is one module of this package (``en.py``, ``fa.py``, …)
holding one :class:`Language`; ``chat.languages.for_language`` finds it by
its ISO 639-1 code. The turn's phases take the question's language and read
their words from here, never from lists of their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from retrieval.languages.normalize import normalize


@dataclass(frozen=True)
class Language:
    # ISO 639-1 code, and the language's English name (a generative model is
    # told to answer in it: chat/prompting.py).
    code: str
    name: str

    # Follow-ups (chat/services/turn/followup_search.py): words by which a
    # question refers back to the conversation, words that continue it when
    # they open it, and two-word openings that do ("what about").
    anaphora: frozenset[str]
    continuations: frozenset[str]
    continuation_phrases: tuple[str, ...]

    # Unnamed subjects (chat/services/turn/clarify.py): kinds of things a
    # question may point at without naming them; ``pointer`` matches a
    # pointing word (group 1), up to three words (group 2) and the kind
    # (group 3); ``articles``, the pointing words that name nothing by
    # themselves, so that what follows (``pinned``: "of …", "called …") or a
    # name among the words (``proper_name``) says which one is meant.
    kinds: frozenset[str]
    # Endings a kind takes in the plural ("countries" is no kind, "countrie" is).
    plural_suffixes: tuple[str, ...]
    pointer: re.Pattern[str]
    articles: frozenset[str]
    pinned: re.Pattern[str]
    proper_name: re.Pattern[str]
    # Matches a question from its start: its first word ("what", "is"), or
    # for a language whose question word may stand later (Persian), the
    # question word wherever it stands (a statement is not disambiguated:
    # clarify.py).
    question_start: re.Pattern[str]

    # Small talk (chat/services/turn/smalltalk.py): the whole message matches.
    small_talk: re.Pattern[str]
    # Words that say little about what a text is about (chat/text.py drops
    # them when it compares texts in this language).
    stop_words: frozenset[str]

    # Built-in texts, used when the workspace has not set its own.
    no_answer_text: str
    small_talk_text: str
    no_documents_text: str
    # The extractive engine's own "no sentence answers" (chat/backends/extractive.py).
    not_found_text: str
    # The form that asks which subject is meant: its question (also the
    # field's label) and its title.
    which_one: str
    form_title: str
    # What a blocked reply is replaced with while the workspace has no safe
    # reply of its own (chat/output_guard.py), and the reply stored when a
    # generative model fails the reply contract twice (chat/output.py).
    safe_reply: str
    fallback_text: str
    # Determiners of a thing not yet singled out ("a credit card", "an
    # index fund"): a kind mentioned only after one of these, or only in the
    # plural, does not tell which one a later "this credit card" means
    # (chat/services/turn/clarify.py).
    indefinites: frozenset[str] = frozenset()


def words(text: str, code: str) -> frozenset[str]:
    """A block of words as the rules compare them: normalised for ``code``
    (retrieval/languages/normalize.py: a list written with Arabic letters
    still matches a question typed with Persian ones) and lower-cased."""
    return frozenset(normalize(text, code).lower().split())


def phrases(texts: tuple[str, ...], code: str) -> tuple[str, ...]:
    """Phrases as the rules compare them (:func:`words`' normalisation)."""
    return tuple(" ".join(normalize(text, code).lower().split()) for text in texts)


def pattern(regex: str, code: str, flags: int = re.IGNORECASE) -> re.Pattern[str]:
    """``regex`` compiled after the same normalisation (which changes no ASCII character)."""
    return re.compile(normalize(regex, code), flags)


# Matches nothing: a rule a language does not have (Persian has no article).
NEVER = re.compile(r"(?!)")
