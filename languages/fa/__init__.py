"""Persian: written in the Arabic script with letters of its own (``پ چ ژ
گ``, and ``ی ک`` where Arabic writes ``ي ك``); it has no article, puts
adjectives after their noun ("این کشور", this country), and its question
word may stand anywhere ("قهوه اولین بار کجا کشت شد؟").

Its folder holds what English's does (languages/en/__init__.py) but quantity
words and abbreviations, and its letter folding (``letters.py``: Arabic
letter forms folded to Persian ones). The lexical analysis stems with
Snowball's Persian stemmer and drops stopwordsiso's Persian list (Snowball
has none).

Its modules:

- ``conversation.py``: the conversation's rules in Persian
- ``detection.py``: what tells a Persian text from an Arabic one
- ``examples.py``: Persian texts the checks run on
- ``texts.py``: Persian's built-in replies
"""

from __future__ import annotations

from languages.base import Language, Lexical
from languages.fa import conversation, detection, letters, texts
from languages.scripts import ARABIC

LANGUAGE = Language(
    code="fa",
    name="Persian",
    script=ARABIC,
    # The Arabic script's first: a text that reads as Persian as Arabic is Persian.
    precedence=1,
    folding=letters.FOLDING,
    detection=detection.DETECTION,
    lexical=Lexical(stemmer="persian", stopwordsiso="fa"),
    conversation=conversation.CONVERSATION,
    texts=texts.TEXTS,
)
