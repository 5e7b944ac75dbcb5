"""Arabic's letters, folded as Arabic search usually does (users type them
inconsistently; languages/normalize.py does digits, marks and zero-width
characters for every language): Persian yeh ``ی`` and alef maksura ``ى``
become ``ي``; Persian keheh ``ک`` becomes ``ك``; ``أ إ آ ٱ`` become ``ا``
and teh marbuta ``ة`` becomes ``ه``."""

from __future__ import annotations

from languages.normalize import Folding

FOLDING: Folding = str.maketrans(
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
)


# Written onto the next word: "and"/"so"/"with"/"as"/"for" + the article, "for
# the", the article; "and", "with", "for", "so", "as" alone (languages/base.py,
# ``Language.proclitics``), longest first.
PROCLITICS = ("وال", "بال", "كال", "فال", "لل", "ال", "و", "ب", "ل", "ف", "ك")
