"""Words of a text, for comparing texts by what they say: lower-cased,
crudely stemmed, without stop words. Used by the extractive engine (how close
a sentence is to a question) and by the citation check (whether a cited part
comes from its passage or from the user).

Words are runs of letters of any script. A text beyond ASCII is normalised
first (``languages.normalize_any``: one fold for both sides of a
comparison, so a question typed with Arabic ``ي ك`` matches a sentence
written with Persian ``ی ک``). Stop words (each language's
``conversation.stop_words``, languages/<code>/conversation.py): English's
always, those of the languages of another script always (their script
shares no word with English's), and another Latin-script language's when
the text has one of their function words and is in that language
(``languages.detect``: "de novo" in an English abstract keeps its "de").
In a text of a language that writes words onto the next (Arabic's article
and "and": ``Language.proclitics``), each word is taken without them.
"""

from __future__ import annotations

from functools import lru_cache

from languages import ENGLISH, LANGUAGES, detect, normalize_any
from retrieval.units import WORD

__all__ = ["WORD", "content_words", "stem"]

_ALWAYS = frozenset(
    normalize_any(word)
    for language in LANGUAGES.values()
    if language is ENGLISH or language.script is not ENGLISH.script
    for word in language.conversation.stop_words
)
_ENGLISH_SCRIPT = {
    code: language.conversation.stop_words
    for code, language in LANGUAGES.items()
    if language is not ENGLISH and language.script is ENGLISH.script
}
_ENGLISH_SCRIPT_ANY = frozenset().union(*_ENGLISH_SCRIPT.values()) - _ALWAYS


@lru_cache(maxsize=50_000)
def content_words(text: str) -> frozenset[str]:
    """Lower-cased, crudely stemmed words without stop words (the recent
    texts' from a cache: a turn compares the same passages' sentences again)."""
    proclitics: tuple[str, ...] = ()
    if not text.isascii():
        language = LANGUAGES.get(detect(text))
        proclitics = language.proclitics if language is not None else ()
        text = normalize_any(text)
    words = WORD.findall(text.lower())
    if proclitics:
        words = [_bare(word, proclitics) for word in words]
    stop = _ALWAYS
    if any(word in _ENGLISH_SCRIPT_ANY for word in words):
        stop = stop | _ENGLISH_SCRIPT.get(detect(text), frozenset())
    return frozenset(stem(w) for w in words if w not in stop and len(w) > 1)


def _bare(word: str, proclitics: tuple[str, ...]) -> str:
    """``word`` without what its language writes onto it (``Language.proclitics``)."""
    for proclitic in proclitics:
        if word.startswith(proclitic) and len(word) - len(proclitic) >= 3:
            return word[len(proclitic) :]
    return word


def stem(word: str) -> str:
    for suffix in ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "ly", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
    return word
