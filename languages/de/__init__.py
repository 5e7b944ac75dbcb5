"""German: written in the Latin script with ``ä ö ü ß``. Its folder
holds what English's does (languages/en/__init__.py) but quantity words and
abbreviations; it is told by its greetings and opening question words too.

Its modules:

- ``conversation.py``: the conversation's rules in German
- ``detection.py``: what tells a German text
- ``examples.py``: German texts the checks run on
- ``stop_words.py``: German stop words of the lexical analysis (Snowball's list)
- ``texts.py``: German's built-in replies
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
