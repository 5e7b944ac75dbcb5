"""The conversation in each language: one module per language (``en.py``,
``fa.py``, ``ar.py``, ``de.py``, ``fr.py``), each one
:class:`~chat.languages.base.Language` of the same shape — its follow-up
words, kinds of things, small talk, question words, stop words and built-in
texts — found by its code with :func:`for_language`.

A turn's language is its question's (:func:`question_language`), detected
by ``retrieval.languages.detect``; a question too short to tell takes the
conversation's, and a conversation that never told takes English's.
"""

from __future__ import annotations

from collections.abc import Sequence

from chat.languages import ar, de, en, fa, fr
from chat.languages.base import Language
from retrieval.languages.detect import UNDETERMINED, detect

__all__ = ["ENGLISH", "LANGUAGES", "Language", "for_language", "question_language"]

ENGLISH = en.LANGUAGE
LANGUAGES: dict[str, Language] = {module.LANGUAGE.code: module.LANGUAGE for module in (en, fa, ar, de, fr)}


def for_language(code: str) -> Language:
    """The language of ``code`` (ISO 639-1); English for one without a module."""
    return LANGUAGES.get(code, ENGLISH)


def question_language(question: str, earlier_questions: Sequence[str] = ()) -> Language:
    """The language a turn is held in: its question's, else the newest earlier
    question's that tells, else English."""
    for text in (question, *reversed(earlier_questions)):
        code = detect(text)
        if code != UNDETERMINED:
            return for_language(code)
    return ENGLISH
