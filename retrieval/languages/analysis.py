"""The lexical leg's analysis: a text's terms, per language, in Python.

A passage is analysed once, at ingestion, in its detected language
(``Passage.language``); its terms, joined by spaces, are
``Passage.lexical_text``, from which PostgreSQL's ``simple`` configuration
(no stemming, no stop words: the terms are final) makes the generated
``search_vector``. A query is analysed the same way at search
(:func:`query_text`) and goes where the raw text used to go, so the SQL of
both legs is unchanged but for the configuration.

:func:`terms`, for ``en``, ``de``, ``fr``, ``fa`` and ``ar``:

1. :func:`retrieval.languages.normalize` in the language (digits, Arabic
   marks, tatweel, zero-width non-joiners; the Arabic-script letter
   variants of Persian or Arabic), then case folding;
2. words: runs of letters, digits and marks (``[^\\W_]+``);
3. the language's stop words dropped (:func:`stop_words`);
4. the language's Snowball stemmer (PyStemmer).

Any other language (``und``: too short to tell, another script, another
language) gets a language-neutral analysis: steps 1 and 2 only, never
another language's stemmer.

A very short Arabic-script query may be Persian or Arabic (a few words
share both alphabets and both spellings): it is analysed both ways and its
terms are the union (:func:`query_languages`). A Latin-script query whose
language cannot be told ("solar panels?") is analysed neutrally and as
English, German and French: the passages it is meant for were analysed in
their document's language (retrieval/passage_analysis.py).
"""

from __future__ import annotations

import functools
import re
import threading

import Stemmer
import stopwordsiso

from retrieval.languages import stopwords
from retrieval.languages.detect import ARABIC, ENGLISH, FRENCH, GERMAN, PERSIAN, UNDETERMINED, detect
from retrieval.languages.normalize import normalize

_SNOWBALL = {ENGLISH: "english", GERMAN: "german", FRENCH: "french", PERSIAN: "persian", ARABIC: "arabic"}
# The languages with an analysis of their own; every other is analysed neutrally.
ANALYSED = frozenset(_SNOWBALL)

_WORD = re.compile(r"[^\W_]+")
_LATIN = re.compile("[a-zA-Z\u00c0-\u024f]")

# A query of at most this many words, in Arabic script, without a letter
# only one of the two languages writes, is analysed as Persian and as Arabic.
SHORT_QUERY_WORDS = 3
# Persian's own letters (Arabic never writes them), and Arabic's teh marbuta
# (Persian writes it in a few loanwords only).
_PERSIAN_ONLY = frozenset("\u067e\u0686\u0698\u06af")
_ARABIC_ONLY = frozenset("\u0629")

# PyStemmer's stemmers keep a cache and are not thread-safe: one per thread.
_local = threading.local()


def analysed_language(language: str) -> str:
    """``language`` when it has an analysis of its own, else ``und``."""
    return language if language in ANALYSED else UNDETERMINED


def _stemmer(language: str) -> Stemmer.Stemmer:
    stemmers: dict[str, Stemmer.Stemmer] | None = getattr(_local, "stemmers", None)
    if stemmers is None:
        stemmers = _local.stemmers = {}
    stemmer = stemmers.get(language)
    if stemmer is None:
        stemmer = stemmers[language] = Stemmer.Stemmer(_SNOWBALL[language])
    return stemmer


@functools.cache
def stop_words(language: str) -> frozenset[str]:
    """The words :func:`terms` drops in ``language``: Snowball's lists for
    English, German and French (:mod:`retrieval.languages.stopwords`),
    stopwordsiso's for Persian and Arabic (normalised as texts are, and only
    the entries that are one word: "می‌شود" is two after normalisation, and
    each part alone may be a word that matters); none for any other."""
    snowball = {ENGLISH: stopwords.ENGLISH, GERMAN: stopwords.GERMAN, FRENCH: stopwords.FRENCH}
    if language in snowball:
        return snowball[language]
    if language not in (PERSIAN, ARABIC):
        return frozenset()
    entries = (
        _WORD.findall(normalize(entry, language).casefold()) for entry in stopwordsiso.stopwords(language)
    )
    return frozenset(words[0] for words in entries if len(words) == 1)


def terms(text: str, language: str) -> list[str]:
    """``text``'s terms in ``language``, in order (module docstring)."""
    language = analysed_language(language)
    words = _WORD.findall(normalize(text, language).casefold())
    if language == UNDETERMINED:
        return words
    stop = stop_words(language)
    return [term for term in _stemmer(language).stemWords([w for w in words if w not in stop]) if term]


def lexical_text(text: str, language: str) -> str:
    """``Passage.lexical_text``: :func:`terms` joined by spaces."""
    return " ".join(terms(text, language))


def query_languages(text: str) -> tuple[str, ...]:
    """The languages a query is analysed in: its detected language; Persian
    and Arabic both for a short Arabic-script query that could be either;
    neutral, English, German and French for a Latin-script query too short
    to tell (module docstring)."""
    language = detect(text)
    if language == UNDETERMINED and _LATIN.search(text):
        return (UNDETERMINED, ENGLISH, GERMAN, FRENCH)
    if language not in (PERSIAN, ARABIC):
        return (language,)
    letters = set(text)
    short = len(_WORD.findall(text)) <= SHORT_QUERY_WORDS
    if short and not letters & _PERSIAN_ONLY and not letters & _ARABIC_ONLY:
        return (PERSIAN, ARABIC)
    return (language,)


def query_text(text: str) -> str:
    """A query's analysed text: the distinct terms of each of its
    :func:`query_languages`, joined by spaces (the lexical leg's ``%(text)s``)."""
    found: dict[str, None] = {}
    for language in query_languages(text):
        found.update(dict.fromkeys(terms(text, language)))
    return " ".join(found)
