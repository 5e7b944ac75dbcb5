"""German: written in the Latin script with ``ä ö ü ß``.

- ``detection.py``: its letters, function words, greetings and opening
  question words (languages/detect.py);
- ``stop_words.py``: Snowball's stop words (the lexical analysis);
- ``conversation.py``: follow-ups, kinds, pointers, questions, small talk;
- ``texts.py``: the built-in replies;
- ``examples.py``: sentences every language's checks run on (tests/languages/).
"""

from __future__ import annotations

from languages.base import Language, Lexical
from languages.de import conversation, detection, stop_words, texts
from languages.scripts import LATIN

LANGUAGE = Language(
    code="de",
    name="German",
    script=LATIN,
    precedence=3,
    folding=None,
    detection=detection.DETECTION,
    lexical=Lexical(stemmer="german", stop_words=stop_words.STOP_WORDS),
    conversation=conversation.CONVERSATION,
    texts=texts.TEXTS,
)
