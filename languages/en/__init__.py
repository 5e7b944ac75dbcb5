"""English: the language the conversation's rules were written and measured
in (MTRAG-UN, SciFact: docs/prompting.md), the default when a text does not
tell its language, and the only one with quantity words and abbreviations
so far.

- ``detection.py``: its function words (languages/detect.py);
- ``stop_words.py``: Snowball's stop words (the lexical analysis);
- ``conversation.py``: follow-ups, kinds, pointers, questions, small talk;
- ``quantities.py``: bounds, ranges and units ("over 70", "65 or older");
- ``abbreviations.py``: where a period ends no sentence;
- ``texts.py``: the built-in replies;
- ``examples.py``: sentences every language's checks run on (tests/languages/).
"""

from __future__ import annotations

from languages.base import Language, Lexical
from languages.en import abbreviations, conversation, detection, quantities, stop_words, texts
from languages.scripts import LATIN

LANGUAGE = Language(
    code="en",
    name="English",
    script=LATIN,
    precedence=0,
    folding=None,
    detection=detection.DETECTION,
    lexical=Lexical(stemmer="english", stop_words=stop_words.STOP_WORDS),
    conversation=conversation.CONVERSATION,
    texts=texts.TEXTS,
    quantities=quantities.QUANTITIES,
    abbreviations=abbreviations.ABBREVIATIONS,
)
