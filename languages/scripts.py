"""The writing systems the languages are written in: which characters are a
script's, and how a text's words are read when its language is detected
(languages/detect.py). A language names its script (``Language.script``);
the script is code, a language's words are data.

* **Latin** (English, German, French): letters have case, so words are
  lower-cased and an acronym ("IL-6", "PKG") is no word ("IL" is no French
  "il"); each distinct function word counts once. A text too short to tell
  is left undetermined: a Latin-script language needs evidence.
* **Arabic** (Persian, Arabic): no case; yeh and kaf are written two ways
  (``ي ی``, ``ك ک``), folded to one before words are compared (a Persian
  text typed on an Arabic keyboard still says "است"), and nothing else, so
  that an Arabic "أين" (where) does not become the Persian "این" (this).
  Each occurrence of a function word counts. A text in this script is
  always given one of its languages.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass

from languages.normalize import Folding, fold

# A word, for detection: a run of letters.
WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class Script:
    name: str
    # A letter of the script: a text is in the script with the most of them.
    letter: re.Pattern[str]
    # Any character of the script's blocks (letters, marks, its punctuation
    # and digits): whether a text has any of it.
    block: re.Pattern[str]
    # A text's words as detection compares them with function words.
    words: Callable[[str], Collection[str]]
    # What one function word of a language weighs in its score.
    word_weight: int
    # Whether detection may leave a text of this script undetermined (too
    # little evidence); otherwise it always names one of its languages.
    undetermined: bool


def _latin_words(text: str) -> Collection[str]:
    # Distinct words, lower-cased, acronyms aside ("IL-6" is no French "il").
    return {word.lower() for word in WORD.findall(text) if not (len(word) > 1 and word.isupper())}


# Yeh and kaf written the Persian way, and nothing else folded.
YEH_KAF: Folding = str.maketrans({"\u064a": "\u06cc", "\u0649": "\u06cc", "\u0643": "\u06a9"})


def _arabic_words(text: str) -> Collection[str]:
    return WORD.findall(fold(text, YEH_KAF))


ARABIC = Script(
    name="Arabic",
    letter=re.compile(
        "[\u0620-\u064a\u066e-\u06d3\u06d5\u06fa-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufefc]"
    ),
    block=re.compile("[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]"),
    words=_arabic_words,
    word_weight=3,
    undetermined=False,
)
LATIN = Script(
    name="Latin",
    letter=re.compile("[a-zA-Z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f]"),
    block=re.compile("[a-zA-Z\u00c0-\u024f]"),
    words=_latin_words,
    word_weight=2,
    undetermined=True,
)
# In this order a text with as many letters of each is read as Arabic script.
SCRIPTS = (ARABIC, LATIN)
