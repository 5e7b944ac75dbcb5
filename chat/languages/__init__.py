"""The conversation in each language: one module per language (``en.py``,
``fa.py``, ``ar.py``, ``de.py``, ``fr.py``), each one
:class:`~chat.languages.base.Language` of the same shape — its follow-up
words, kinds of things, small talk, question words, stop words and built-in
texts — found by its code with :func:`for_language`.

A turn's language is its question's (:func:`question_language`), detected
by ``retrieval.languages.detect``; a question too short to tell takes the
conversation's, and a conversation that never told takes English's.

A workspace may word the replies the service writes itself
(:func:`workspace_language`): for each text, its own for the turn's
language (``Workspace.texts``), else its single ``no_answer_text`` /
``small_talk_text`` when changed from the default — the workspace's word
for every language it gave none of its own — else the language's built-in
text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from chat.languages import ar, de, en, fa, fr
from chat.languages.base import Language
from retrieval.languages.detect import UNDETERMINED, detect
from workspaces.models import DEFAULT_NO_ANSWER_TEXT, DEFAULT_SMALL_TALK_TEXT, Workspace
from workspaces.texts import workspace_text

__all__ = [
    "ENGLISH",
    "LANGUAGES",
    "Language",
    "for_language",
    "question_language",
    "workspace_language",
]

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


def workspace_language(workspace: Workspace, language: Language) -> Language:
    """``language`` with the workspace's own texts in place of the built-in
    ones (the order in the module doc); the rules stay the language's."""
    single = {
        "no_answer_text": _changed(workspace.no_answer_text, DEFAULT_NO_ANSWER_TEXT),
        "small_talk_text": _changed(workspace.small_talk_text, DEFAULT_SMALL_TALK_TEXT),
    }

    def text(key: str) -> str:
        own = workspace_text(workspace.texts, language.code, key) or single.get(key)
        return own if own is not None else str(getattr(language, key))

    return replace(
        language,
        no_answer_text=text("no_answer_text"),
        small_talk_text=text("small_talk_text"),
        no_documents_text=text("no_documents_text"),
        which_one=text("which_one"),
        form_title=text("form_title"),
    )


def _changed(text: str, default: str) -> str | None:
    return text if text != default else None
