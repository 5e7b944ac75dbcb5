"""Words of a text, for comparing texts by what they say: lower-cased,
crudely stemmed, without stop words. Used by the extractive engine (how close
a sentence is to a question) and by the citation check (whether a cited part
comes from its passage or from the user)."""

from __future__ import annotations

from functools import lru_cache

from retrieval.units import WORD

__all__ = ["STOP_WORDS", "WORD", "content_words", "stem"]

STOP_WORDS = frozenset(
    """a an the and or but if then than so of to in on at by for with from as into onto about over
    under is are was were be been being am do does did doing have has had having can could should would
    may might must shall will what which who whom whose when where why how i me my we our you your he him
    his she her it its they them their this that these those there here not no nor any some all each
    every""".split()  # noqa: SIM905 (a readable block of words)
)


@lru_cache(maxsize=50_000)
def content_words(text: str) -> frozenset[str]:
    """Lower-cased, crudely stemmed words without stop words (the recent
    texts' from a cache: a turn compares the same passages' sentences again)."""
    return frozenset(stem(w) for w in WORD.findall(text.lower()) if w not in STOP_WORDS and len(w) > 1)


def stem(word: str) -> str:
    for suffix in ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "ly", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
    return word
