"""Arabic: written in the Arabic script, with ``ي ى ك ة`` where Persian
writes ``ی ی ک ه``; it attaches "and" (و) and the article (ال) to the next
word: "وماذا" (and what), "هذا البلد" (this country).

Its folder holds what English's does (languages/en/__init__.py) but quantity
words and abbreviations, and its letter folding (``letters.py``: Persian
letter forms and the variants of alef folded). The lexical analysis stems
with Snowball's Arabic stemmer and drops stopwordsiso's Arabic list
(Snowball has none).

Its modules:

- ``conversation.py``: the conversation's rules in Arabic
- ``detection.py``: what tells an Arabic text from a Persian one
- ``examples.py``: Arabic texts the checks run on
- ``texts.py``: Arabic's built-in replies
"""

from __future__ import annotations

from languages.ar import conversation, detection, letters, texts
from languages.base import Language, Lexical
from languages.scripts import ARABIC

LANGUAGE = Language(
    code="ar",
    name="Arabic",
    script=ARABIC,
    precedence=2,
    folding=letters.FOLDING,
    detection=detection.DETECTION,
    lexical=Lexical(stemmer="arabic", stopwordsiso="ar"),
    conversation=conversation.CONVERSATION,
    texts=texts.TEXTS,
    proclitics=letters.PROCLITICS,
)
