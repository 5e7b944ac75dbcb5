"""French: written in the Latin script with its accented letters (``é è ê
à ç`` …) and elided articles ("l'acteur").

- ``detection.py``: its letters, function words, greetings and opening
  question words (languages/detect.py);
- ``stop_words.py``: Snowball's stop words (the lexical analysis);
- ``conversation.py``: follow-ups, kinds, pointers, questions, small talk;
- ``texts.py``: the built-in replies;
- ``examples.py``: sentences every language's checks run on (tests/languages/).
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
