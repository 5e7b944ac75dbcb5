"""What the service knows of a language: one :class:`Language`, made of the
data each part of the service reads.

Each language is one folder of this package (``languages/en/``,
``languages/fa/``, …) whose ``__init__.py`` defines ``LANGUAGE``; the
registry (languages/registry.py) finds it by its ISO 639-1 code. Code reads
the data; it never names a language to decide how to treat it.

The helpers at the bottom write word lists and patterns as they are
compared: after the language's own folding (languages/normalize.py), so that
a list written with Arabic letters still matches a question typed with
Persian ones.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from languages.normalize import Folding, fold
from languages.scripts import Script

# What a greeting or an opening question word weighs in detection, and the
# score a text needs before it is named a language that asks no other
# (``Detection.min_evidence``; English asks 1, Persian and Arabic 0): one
# "la" or "on" in an English abstract ("PKG-la", "based on") is no French.
MIN_EVIDENCE = 4


@dataclass(frozen=True)
class Detection:
    """What tells a text is in the language (languages/detect.py)."""

    # Its commonest words that no other language of its script writes, as
    # the script reads words (languages/scripts.py).
    function_words: frozenset[str]
    # Letters only it writes, each worth ``letter_weight``.
    letters: frozenset[str] = frozenset()
    letter_weight: int = 1
    # Letters it writes its own way (Persian ``ی ک``, Arabic ``ي ى ك``), each
    # worth 1; a tie goes to the one language whose forms the text has.
    forms: frozenset[str] = frozenset()
    # Words that alone say the language (a greeting, thanks), and question
    # words that do when they open the text ("Wie kommunizieren …?").
    greetings: frozenset[str] = frozenset()
    openings: frozenset[str] = frozenset()
    # A prefix its words take (Arabic's article "ال"): a word of at least two
    # more letters that is no function word counts 1.
    prefixes: tuple[str, ...] = ()
    # The score below which a text is not named this language (undetermined).
    min_evidence: int = MIN_EVIDENCE


@dataclass(frozen=True)
class Lexical:
    """The lexical leg's analysis in the language (languages/analysis.py)."""

    # PyStemmer's name of its Snowball stemmer; None: analysed neutrally.
    stemmer: str | None
    # The words the analysis drops; and the code of stopwordsiso's list
    # added to them (its one-word entries, folded as texts are).
    stop_words: frozenset[str] = frozenset()
    stopwordsiso: str | None = None


@dataclass(frozen=True)
class Conversation:
    """The conversation's rules (chat/services/turn/)."""

    # Follow-ups (followup_search.py): words by which a question refers back
    # to the conversation, words that continue it when they open it, and
    # two-word openings that do ("what about").
    anaphora: frozenset[str]
    continuations: frozenset[str]
    continuation_phrases: tuple[str, ...]
    # Unnamed subjects (clarify.py): kinds of things a question may point at
    # without naming them; ``pointer`` matches a pointing word (group 1), up
    # to three words (group 2) and the kind (group 3); ``articles``, the
    # pointing words that name nothing by themselves, so that what follows
    # (``pinned``: "of …", "called …") or a name among the words
    # (``proper_name``) says which one is meant.
    kinds: frozenset[str]
    # Endings a kind takes in the plural ("countries" is no kind, "countrie" is).
    plural_suffixes: tuple[str, ...]
    pointer: re.Pattern[str]
    articles: frozenset[str]
    pinned: re.Pattern[str]
    proper_name: re.Pattern[str]
    # Matches a question from its start: its first word ("what", "is"), or
    # for a language whose question word may stand later (Persian), the
    # question word wherever it stands (a statement is not disambiguated).
    question_start: re.Pattern[str]
    # Small talk (smalltalk.py): the whole message matches.
    small_talk: re.Pattern[str]
    # Words that say little about what a text is about (chat/text.py drops
    # them when it compares texts in this language).
    stop_words: frozenset[str]
    # Determiners of a thing not yet singled out ("a credit card"): a kind
    # mentioned only after one of these, or only in the plural, does not
    # tell which one a later "this credit card" means (clarify.py).
    indefinites: frozenset[str] = frozenset()
    # Words that say which of a thing's values or instances is asked ("the
    # maximum daily dose", "the recommended dose", "the latest version"),
    # not which thing: after a pointing word they name no subject
    # (chat/services/turn/naming.py).
    qualifiers: frozenset[str] = frozenset()
    # Words by which a follow-up asks to compare ("compare", "both", "the
    # others"): it is not kept to the subject in focus (chat/services/turn/history.py).
    comparisons: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Quantities:
    """Words of quantities and their units (chat/quantities.py): "over 70",
    "65 or older", "between 18 and 65". Empty for a language without them:
    its texts' ranges are then not read."""

    # Words before a number that bound it from below or above, and after
    # a number ("70 or over") with ``conjunctions`` between.
    at_least: tuple[str, ...] = ()
    at_least_after: tuple[str, ...] = ()
    at_most: tuple[str, ...] = ()
    at_most_after: tuple[str, ...] = ()
    conjunctions: tuple[str, ...] = ()
    # A phrase between the bound and its number ("over the age of 70").
    before_number: tuple[str, ...] = ()
    # A unit word between a number and its conjunction ("70 years or over").
    unit_words: tuple[str, ...] = ()
    # A word opening a range, and the words joining its two numbers.
    between: tuple[str, ...] = ()
    range_joiners: tuple[str, ...] = ()
    # Unit words and the unit each names; units known by name; the endings
    # of a unit's plural.
    unit_aliases: Mapping[str, str] = field(default_factory=dict)
    units: frozenset[str] = frozenset()
    plural_suffixes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Texts:
    """The replies the service writes itself, used where the workspace has
    not set its own (languages/texts.py lists those it may set)."""

    no_answer_text: str
    small_talk_text: str
    no_documents_text: str
    # The extractive engine's own "no sentence answers".
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
    # What the extractive engine says before it quotes passages in another
    # language than the question's (chat/backends/extractive.py).
    quoting: str


@dataclass(frozen=True, eq=False)
class Language:
    # ISO 639-1 code (the folder's name), and the language's English name (a
    # generative model is told to answer in it: chat/prompting.py).
    code: str
    name: str
    script: Script
    # Where two languages read a text equally (detection's ties, the order
    # small talk and analyses try them in), the lower one wins: English's is
    # 0, the language the rules were written for and the default.
    precedence: int
    # Its letters written another way folded to its own (None: no folding).
    folding: Folding | None
    detection: Detection
    lexical: Lexical
    conversation: Conversation
    texts: Texts
    quantities: Quantities = Quantities()
    # Abbreviations a sentence does not end at ("e.g.", "Dr."), lower-case,
    # without their last period (retrieval/units.py).
    abbreviations: frozenset[str] = frozenset()
    # What the language writes onto the next word ("and", the article, "for"),
    # longest first, as folded (languages/normalize.py): a word compared
    # (chat/text.py) is taken without one when three letters or more remain,
    # so "الضمان" and "ضمان", "لمدة" and "مدة" are one word.
    proclitics: tuple[str, ...] = ()


@dataclass(frozen=True)
class Examples:
    """Texts in the language that its data must read right: every language
    is put through the same checks with its own (tests/languages/)."""

    # Questions and passages detected as the language.
    sentences: tuple[str, ...]
    # Whole messages that are small talk.
    small_talk: tuple[str, ...]
    # Questions without their question mark (told by ``question_start``),
    # and statements (neither questions nor small talk).
    questions: tuple[str, ...]
    statements: tuple[str, ...]
    # Follow-ups that refer back or go on (anaphora, an opening continuation).
    follow_ups: tuple[str, ...]
    # Questions that point at an unnamed thing of a known kind ("this country").
    pointers: tuple[str, ...]
    # Two forms of one word that the analysis makes one term ("refunds", "refund").
    same_term: tuple[str, str]


def words(text: str, folding: Folding | None = None) -> frozenset[str]:
    """A block of words as the rules compare them: folded and lower-cased."""
    return frozenset(fold(text, folding).lower().split())


def phrases(texts: tuple[str, ...], folding: Folding | None = None) -> tuple[str, ...]:
    """Phrases as the rules compare them (:func:`words`' folding)."""
    return tuple(" ".join(fold(text, folding).lower().split()) for text in texts)


def pattern(regex: str, folding: Folding | None = None, flags: int = re.IGNORECASE) -> re.Pattern[str]:
    """``regex`` compiled after the same folding (which changes no ASCII character)."""
    return re.compile(fold(regex, folding), flags)


# Matches nothing: a rule a language does not have (Persian has no article).
NEVER = re.compile(r"(?!)")
