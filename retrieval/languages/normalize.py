"""Arabic-script text made comparable: the same word typed on a Persian or an
Arabic keyboard, with or without vowel marks, stretched or not, reads the same.

:func:`normalize` (for the lexical leg and for comparing a question's words
with a sentence's) does, in every language:

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

and folds the letters one language writes differently from the other:

* ``fa``: Arabic yeh ``ي`` and alef maksura ``ى`` become Persian yeh
  ``ی``; Arabic kaf ``ك`` becomes Persian keheh ``ک``; teh marbuta ``ة``
  and heh with yeh above ``ۀ`` become ``ه``; alef with hamza above or below
  and alef wasla ``أ إ ٱ`` become ``ا`` (``آ`` is a letter of its own in
  Persian and stays);
* ``ar``: Persian yeh ``ی`` and alef maksura ``ى`` become ``ي``; Persian
  keheh ``ک`` becomes ``ك``; ``أ إ آ ٱ`` become ``ا`` and teh marbuta
  ``ة`` becomes ``ه`` (the usual Arabic search normalisation: users type
  them inconsistently).

Other languages get only the first list (their letters are left as they are:
no case folding, no accents removed).
"""

from __future__ import annotations

import re

PERSIAN, ARABIC = "fa", "ar"

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

_LETTERS = {
    PERSIAN: str.maketrans(
        {
            "\u064a": "\u06cc",  # ي -> ی
            "\u0649": "\u06cc",  # ى -> ی
            "\u0643": "\u06a9",  # ك -> ک
            "\u0629": "\u0647",  # ة -> ه
            "\u06c0": "\u0647",  # ۀ -> ه
            "\u0623": "\u0627",  # أ -> ا
            "\u0625": "\u0627",  # إ -> ا
            "\u0671": "\u0627",  # ٱ -> ا
        }
    ),
    ARABIC: str.maketrans(
        {
            "\u06cc": "\u064a",  # ی -> ي
            "\u0649": "\u064a",  # ى -> ي
            "\u06a9": "\u0643",  # ک -> ك
            "\u0629": "\u0647",  # ة -> ه
            "\u0623": "\u0627",  # أ -> ا
            "\u0625": "\u0627",  # إ -> ا
            "\u0622": "\u0627",  # آ -> ا
            "\u0671": "\u0627",  # ٱ -> ا
        }
    ),
}


def normalize(text: str, language: str) -> str:
    """``text`` with digits, marks and zero-width characters normalised, and
    the Arabic-script letters of ``language`` (``fa`` or ``ar``) folded
    (module doc). Idempotent; a text without Arabic script or non-ASCII
    digits comes back unchanged."""
    text = _MARKS.sub("", text.translate(_COMMON))
    letters = _LETTERS.get(language)
    return text.translate(letters) if letters is not None else text
