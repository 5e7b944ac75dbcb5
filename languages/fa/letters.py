"""Persian's letters, folded: the same word typed on a Persian or an Arabic
keyboard reads the same (languages/normalize.py does digits, marks and
zero-width characters for every language). Arabic yeh ``ي`` and alef
maksura ``ى`` become Persian yeh ``ی``; Arabic kaf ``ك`` becomes Persian
keheh ``ک``; teh marbuta ``ة`` and heh with yeh above ``ۀ`` become ``ه``;
alef with hamza above or below and alef wasla ``أ إ ٱ`` become ``ا``
(``آ`` is a letter of its own in Persian and stays)."""

from __future__ import annotations

from languages.normalize import Folding

FOLDING: Folding = str.maketrans(
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
)
