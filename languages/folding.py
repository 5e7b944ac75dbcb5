"""Text made comparable: the normalisation every language shares, and a
language's own letter folding on top of it (its table, ``Language.folding``).

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

and then translates the letters of the table it is given (a language's
folding: languages/fa/letters.py, languages/ar/letters.py). Other letters are
left as they are: no case folding, no accents removed.

This module knows no language: the registry (languages/normalize.py) finds
a language's table by its code, and a language's own data folds its word
lists with its table directly (languages/base.py), so that the data can be
read before the registry is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# A ``str.translate`` table: code point -> replacement.
Folding = Mapping[int, str]

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
