"""The lexical leg's analysis: a text's terms, per language, in Python.

A passage is analysed once, at ingestion, in its detected language
(``Passage.language``); its terms, joined by spaces, are
``Passage.lexical_text``, from which PostgreSQL's ``simple`` configuration
(no stemming, no stop words: the terms are final) makes the generated
``search_vector``. A query is analysed the same way at search
(:func:`query_text`) and goes where the raw text used to go, so the SQL of
both legs is unchanged but for the configuration.

:func:`terms`, for a language with a stemmer (``Language.lexical``):

1. :func:`languages.normalize` in the language (digits, Arabic marks,
   tatweel, zero-width non-joiners; the language's own letter folding),
   then case folding;
2. words: runs of letters, digits and marks (``[^\\W_]+``);
3. the language's stop words dropped (:func:`stop_words`);
4. the language's Snowball stemmer (PyStemmer).

Any other language (``und``: too short to tell, another script, a language
without a stemmer) gets a language-neutral analysis: steps 1 and 2 only,
never another language's stemmer.

A query whose language cannot be told is analysed in several
(:func:`query_languages`): a Latin-script one ("solar panels?") neutrally
and in every Latin-script language, whose passages were analysed in their
document's language (retrieval/passage_analysis.py); a very short query in
a script whose detection always names a language (Arabic: a few words
share Persian's and Arabic's alphabets and spellings) in each of that
script's languages, unless a letter only one of them writes says which.
Its terms are the union.
"""

from __future__ import annotations

import functools
import re
import threading

import Stemmer
import stopwordsiso

from languages.base import Language
from languages.detect import UNDETERMINED, detect
from languages.normalize import normalize
from languages.registry import LANGUAGES, WRITTEN_IN
from languages.scripts import SCRIPTS, Script

_WORD = re.compile(r"[^\W_]+")

# A query of at most this many words, in a script whose detection always
# names a language, without a letter only one of them writes, is analysed
# in each of them.
SHORT_QUERY_WORDS = 3

# PyStemmer's stemmers keep a cache and are not thread-safe: one per thread.
_local = threading.local()


def analysed_language(language: str) -> str:
    """``language`` when it has an analysis of its own, else ``und``."""
    found = LANGUAGES.get(language)
    return language if found is not None and found.lexical.stemmer is not None else UNDETERMINED


def _stemmer(language: Language) -> Stemmer.Stemmer:
    stemmers: dict[str, Stemmer.Stemmer] | None = getattr(_local, "stemmers", None)
    if stemmers is None:
        stemmers = _local.stemmers = {}
    stemmer = stemmers.get(language.code)
    if stemmer is None:
        stemmer = stemmers[language.code] = Stemmer.Stemmer(language.lexical.stemmer)
    return stemmer


def stop_words(language: str) -> frozenset[str]:
    """The words :func:`terms` drops in ``language``: its own list (Snowball's
    for English, German and French) and stopwordsiso's where the language
    names one (Persian, Arabic: normalised as texts are, and only the
    entries that are one word: "می‌شود" is two after normalisation, and each
    part alone may be a word that matters); none for any other."""
    found = LANGUAGES.get(language)
    return _stop_words(found) if found is not None else frozenset()


@functools.cache
def _stop_words(language: Language) -> frozenset[str]:
    lexical = language.lexical
    if lexical.stopwordsiso is None:
        return lexical.stop_words
    entries = (
        _WORD.findall(normalize(entry, language.code).casefold())
        for entry in stopwordsiso.stopwords(lexical.stopwordsiso)
    )
    return lexical.stop_words | frozenset(words[0] for words in entries if len(words) == 1)


def terms(text: str, language: str) -> list[str]:
    """``text``'s terms in ``language``, in order (module docstring)."""
    language = analysed_language(language)
    words = _WORD.findall(normalize(text, language).casefold())
    if language == UNDETERMINED:
        return words
    stop = stop_words(language)
    stemmed = _stemmer(LANGUAGES[language]).stemWords([w for w in words if w not in stop])
    return [term for term in stemmed if term]


def lexical_text(text: str, language: str) -> str:
    """``Passage.lexical_text``: :func:`terms` joined by spaces."""
    return " ".join(terms(text, language))


def _analysed_in(script: Script) -> tuple[str, ...]:
    return tuple(language.code for language in WRITTEN_IN.get(script, ()) if language.lexical.stemmer)


def query_languages(text: str) -> tuple[str, ...]:
    """The languages a query is analysed in (module docstring): its detected
    language, or several when it is too short to tell."""
    code = detect(text)
    if code == UNDETERMINED:
        script = next((s for s in SCRIPTS if s.undetermined and s.block.search(text)), None)
        return (UNDETERMINED, *_analysed_in(script)) if script is not None else (UNDETERMINED,)
    language = LANGUAGES[code]
    if language.script.undetermined or len(_WORD.findall(text)) > SHORT_QUERY_WORDS:
        return (code,)
    siblings = _analysed_in(language.script)
    letters = set(text)
    if code in siblings and not any(letters & LANGUAGES[other].detection.letters for other in siblings):
        return siblings
    return (code,)


def query_text(text: str) -> str:
    """A query's analysed text: the distinct terms of each of its
    :func:`query_languages`, joined by spaces (the lexical leg's ``%(text)s``)."""
    found: dict[str, None] = {}
    for language in query_languages(text):
        found.update(dict.fromkeys(terms(text, language)))
    return " ".join(found)
