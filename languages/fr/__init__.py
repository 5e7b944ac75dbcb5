"""French: written in the Latin script with its accented letters (``é è ê
à ç`` …) and elided articles ("l'acteur"). Its folder holds what English's
does (languages/en/__init__.py) but quantity words and abbreviations; it is
told by its greetings and opening question words too.

Its modules:

- ``conversation.py``: the conversation's rules in French
- ``detection.py``: what tells a French text
- ``examples.py``: French texts the checks run on
- ``stop_words.py``: French stop words of the lexical analysis (Snowball's list)
- ``texts.py``: French's built-in replies
"""

from __future__ import annotations

from languages.base import Language, Lexical
from languages.fr import conversation, detection, stop_words, texts
from languages.scripts import LATIN

LANGUAGE = Language(
    code="fr",
    name="French",
    script=LATIN,
    precedence=4,
    folding=None,
    detection=detection.DETECTION,
    lexical=Lexical(stemmer="french", stop_words=stop_words.STOP_WORDS),
    conversation=conversation.CONVERSATION,
    texts=texts.TEXTS,
)
