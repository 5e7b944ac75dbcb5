"""Text made comparable: the same word typed on a Persian or an Arabic
keyboard, with or without vowel marks, stretched or not, reads the same.

:func:`fold` does, in every language:

* Persian (``۰``–``۹``) and Arabic-Indic (``٠``–``٩``) digits become ASCII
  digits, the Arabic decimal and thousands separators ``٫ ٬`` become
  ``. ,`` and the Arabic percent sign ``٪`` becomes ``%`` ("۷۰" and "70"
  are one number);
* vowel marks and other combining Arabic marks (fatha, kasra, damma,
  tanwin, shadda, sukun, the superscript alef, Quranic marks) and the
  tatweel ``ـ`` (a stretch, not a letter) are removed;
* zero-width non-joiners and joiners (and a zero-width space) become a
  space, as Lucene's Persian analysis does: a Persian compound typed with a
  non-joiner ("می‌نوشیدند"), with a space or as two words reads the same;
  runs of spaces they leave are not collapsed, so offsets of the other
  characters shift only where a mark was removed.

and then translates the letters of the table it is given: a language's
folding (``Language.folding``: languages/fa/letters.py,
languages/ar/letters.py). Other letters are left as they are: no case
folding, no accents removed.

:func:`normalize` folds a text in a language, found by its code (a code
without a folder, ``und`` or ``""``, gets the first part only);
:func:`normalize_any` compares words across languages whose text has not
been told apart: each script's letters folded as its first language folds
them (the Arabic script's: Persian's), so a question typed with Arabic
``ي ك`` matches a sentence written with Persian ``ی ک``.

This module imports no other of the package: a language's own data folds
its word lists with its table directly (languages/base.py), and the
registry fills :data:`FOLDINGS` and :data:`COMPARED` when it reads the
folders (languages/registry.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# A ``str.translate`` table: code point -> replacement.
Folding = Mapping[int, str]

# Each registered language's folding, by code, and the foldings
# normalize_any applies (each script's first language's): filled by the
# registry, in place.
FOLDINGS: dict[str, Folding] = {}
COMPARED: list[Folding] = []

_DIGITS = {
    **{0x06F0 + i: str(i) for i in range(10)},  # Persian (Extended Arabic-Indic) digits
    **{0x0660 + i: str(i) for i in range(10)},  # Arabic-Indic digits
    0x066B: ".",  # Arabic decimal separator
    0x066C: ",",  # Arabic thousands separator
    0x066A: "%",  # Arabic percent sign
}
_ZERO_WIDTH = {0x200C: " ", 0x200D: " ", 0x200B: " "}
# Combining marks of the Arabic script and the tatweel: removed.
_MARKS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e8\u06ea-\u06ed\u0640]")
_COMMON = str.maketrans({**_DIGITS, **_ZERO_WIDTH})


def fold(text: str, folding: Folding | None = None) -> str:
    """``text`` with digits, marks and zero-width characters normalised, then
    the letters of ``folding`` translated (module doc). Idempotent when the
    table is; a text without Arabic script or non-ASCII digits comes back
    unchanged."""
    text = _MARKS.sub("", text.translate(_COMMON))
    return text.translate(folding) if folding is not None else text


def normalize(text: str, language: str) -> str:
    """``text`` normalised in ``language`` (module doc). Idempotent; a text
    without Arabic script or non-ASCII digits comes back unchanged."""
    return fold(text, FOLDINGS.get(language))


def normalize_any(text: str) -> str:
    """``text`` normalised for comparing across languages (module doc)."""
    text = fold(text)
    for folding in COMPARED:
        text = text.translate(folding)
    return text
