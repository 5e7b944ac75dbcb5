"""A text normalised for comparing and indexing in a language: the same word
typed on a Persian or an Arabic keyboard, with or without vowel marks,
stretched or not, reads the same.

:func:`normalize` folds what every language shares (digits, Arabic marks,
the tatweel, zero-width characters: languages/folding.py), then the letters
the language writes its own way (``Language.folding``: languages/fa/letters.py,
languages/ar/letters.py). A code without a folder (``und``, ``""``) gets the
first part only.

:func:`normalize_any` is for comparing words across languages whose text
has not been told apart: each script's letters are folded as its first
language folds them (the Arabic script's: Persian's), so a question typed
with Arabic ``ي ك`` matches a sentence written with Persian ``ی ک``.
"""

from __future__ import annotations

from languages.folding import fold
from languages.registry import LANGUAGES, WRITTEN_IN


def normalize(text: str, language: str) -> str:
    """``text`` normalised in ``language`` (module doc). Idempotent; a text
    without Arabic script or non-ASCII digits comes back unchanged."""
    found = LANGUAGES.get(language)
    return fold(text, found.folding if found is not None else None)


def normalize_any(text: str) -> str:
    """``text`` normalised for comparing across languages (module doc)."""
    text = fold(text)
    for languages in WRITTEN_IN.values():
        if languages[0].folding is not None:
            text = text.translate(languages[0].folding)
    return text
