"""Words of a text, for comparing texts by what they say: lower-cased,
crudely stemmed, without stop words. Used by the extractive engine (how close
a sentence is to a question) and by the citation check (whether a cited part
comes from its passage or from the user).

Words are runs of letters of any script. A text in the Arabic script is
normalised first (``retrieval.languages.normalize`` with Persian's letters:
one fold for both sides of a comparison, so a question typed with Arabic
``ي ك`` matches a sentence written with Persian ``ی ک``). Stop words
(chat/languages/): English's always, Persian's and Arabic's always (their
script shares no word with the others), and German's or French's when the
text has one of their function words and is in that language
(``retrieval.languages.detect``: "de novo" in an English abstract keeps its
"de").
"""

from __future__ import annotations

from functools import lru_cache

from chat.languages import ENGLISH, LANGUAGES
from retrieval.languages.detect import detect
from retrieval.languages.normalize import normalize
from retrieval.units import WORD

__all__ = ["STOP_WORDS", "WORD", "content_words", "stem"]

# English's, which the quantities' units are checked against (chat/quantities.py).
STOP_WORDS = ENGLISH.stop_words
_ALWAYS = STOP_WORDS | frozenset(
    normalize(word, "fa") for code in ("fa", "ar") for word in LANGUAGES[code].stop_words
)
_LATIN = {code: LANGUAGES[code].stop_words for code in ("de", "fr")}
_LATIN_ANY = frozenset().union(*_LATIN.values()) - _ALWAYS


@lru_cache(maxsize=50_000)
def content_words(text: str) -> frozenset[str]:
    """Lower-cased, crudely stemmed words without stop words (the recent
    texts' from a cache: a turn compares the same passages' sentences again)."""
    if not text.isascii():
        text = normalize(text, "fa")
    words = WORD.findall(text.lower())
    stop = _ALWAYS
    if any(word in _LATIN_ANY for word in words):
        stop = stop | _LATIN.get(detect(text), frozenset())
    return frozenset(stem(w) for w in words if w not in stop and len(w) > 1)


def stem(word: str) -> str:
    for suffix in ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "ly", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
    return word
