"""The replies the service writes itself, worded by the workspace.

A workspace may word them (:func:`workspace_language`): for each text, its
own for the turn's language (``Workspace.texts``), else its single
``no_answer_text`` / ``small_talk_text`` when changed from the default —
the workspace's word for every language it gave none of its own — else the
language's built-in text (``languages/<code>/texts.py``).
"""

from __future__ import annotations

from dataclasses import replace

from languages import ENGLISH, Language
from languages.texts import TEXT_KEYS
from workspaces.models import Workspace
from workspaces.texts import workspace_text


def workspace_language(workspace: Workspace, language: Language) -> Language:
    """``language`` with the workspace's own texts in place of the built-in
    ones (the order in the module doc); the rules stay the language's."""
    single = {
        "no_answer_text": _changed(workspace.no_answer_text, ENGLISH.texts.no_answer_text),
        "small_talk_text": _changed(workspace.small_talk_text, ENGLISH.texts.small_talk_text),
    }
    own = {}
    for key in TEXT_KEYS:
        text = workspace_text(workspace.texts, language.code, key) or single.get(key)
        if text is not None:
            own[key] = text
    return replace(language, texts=replace(language.texts, **own))


def _changed(text: str, default: str) -> str | None:
    return text if text != default else None
