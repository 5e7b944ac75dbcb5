"""Every language the service knows, at the bottom of the import graph: one
folder per language holding all of its data, and the code that reads it.

The folders (``languages/<code>/``, the ISO 639-1 code; ``en``, ``fa``,
``ar``, ``de``, ``fr``) each define ``LANGUAGE``, a
:class:`~languages.base.Language`: how to detect it, how to fold its
letters, its stop words and stemmer, the conversation's words (follow-ups,
kinds, questions, small talk), its quantity words, its built-in texts, and
examples its data must read right. The code, generic over that data:

- ``base.py``: :class:`Language` and its parts, and the helpers a folder
  writes its word lists with;
- ``registry.py``: :data:`LANGUAGES`, the folders found, and
  :func:`for_language`;
- ``scripts.py``: the Latin and Arabic scripts, how each reads words;
- ``normalize.py``: :func:`normalize` (digits, marks, a language's letter
  folding) and :func:`normalize_any`;
- ``detect.py``: :func:`detect`, and :func:`question_language`, the
  language a chat turn is held in;
- ``analysis.py``: the lexical leg's analysis (``terms``, ``query_text``);
- ``texts.py``: the texts a workspace may word itself.

This package imports no other package of the project (an import-linter
contract), so every app can read it. Adding a language is adding a folder
that passes the checks every language runs through
(tests/languages/test_every_language.py; docs/architecture.md, "Adding a
language").
"""

from __future__ import annotations

from languages.base import Language
from languages.detect import UNDETERMINED, detect, question_language
from languages.normalize import normalize, normalize_any
from languages.registry import ENGLISH, LANGUAGES, for_language

__all__ = [
    "ENGLISH",
    "LANGUAGES",
    "UNDETERMINED",
    "Language",
    "detect",
    "for_language",
    "normalize",
    "normalize_any",
    "question_language",
]
