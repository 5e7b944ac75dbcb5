"""A workspace's own texts per language (``Workspace.texts``).

``{"fa": {"no_answer_text": "…", "small_talk_text": "…"}, "de": {…}}``: for
a turn held in a language, a text set here for that language wins over the
workspace's single ``no_answer_text`` / ``small_talk_text`` and over the
built-in text of the language (chat/languages/ resolves them). The
languages and keys are those chat has built-in texts for; chat sits above
this app, so the lists live here and a test holds chat's languages to them.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

# ISO 639-1 codes of the languages the conversation has texts for.
TEXT_LANGUAGES = ("en", "fa", "ar", "de", "fr")
# The replies the service writes itself: the documents don't say, small talk,
# a workspace without documents, and the "which one do you mean?" form (its
# question, also its field's label, and its title).
TEXT_KEYS = ("no_answer_text", "small_talk_text", "no_documents_text", "which_one", "form_title")
# As long as the single texts may be; a form's question and title as long as
# the reply contract lets a label be (chat/output.py, MAX_LABEL_CHARS).
MAX_TEXT_CHARS = {
    "no_answer_text": 2000,
    "small_talk_text": 2000,
    "no_documents_text": 2000,
    "which_one": 200,
    "form_title": 200,
}

WorkspaceTexts = dict[str, dict[str, str]]


def texts_problems(value: Any) -> dict[str, list[str]]:
    """What is wrong with a ``texts`` value, keyed by the path of each
    problem (``texts.fa.which_one``); empty when it is valid."""
    if not isinstance(value, dict):
        return {"texts": ["Expected an object keyed by language code."]}
    problems: dict[str, list[str]] = {}
    for code, texts in value.items():
        where = f"texts.{code}"
        if code not in TEXT_LANGUAGES:
            problems[where] = [f"Unknown language; one of {', '.join(TEXT_LANGUAGES)}."]
        elif not isinstance(texts, dict):
            problems[where] = ["Expected an object keyed by text name."]
        else:
            for key, text in texts.items():
                problem = _text_problem(key, text)
                if problem:
                    problems[f"{where}.{key}"] = [problem]
    return problems


def _text_problem(key: Any, text: Any) -> str | None:
    if key not in MAX_TEXT_CHARS:
        return f"Unknown text; one of {', '.join(TEXT_KEYS)}."
    if not isinstance(text, str):
        return "Expected a string."
    if not text.strip():
        return "This text may not be blank."
    if len(text) > MAX_TEXT_CHARS[key]:
        return f"Ensure this text has no more than {MAX_TEXT_CHARS[key]} characters."
    return None


def texts_validate(value: Any) -> None:
    """The model field's validator (the admin's form, ``full_clean``)."""
    problems = texts_problems(value)
    if problems:
        raise ValidationError("; ".join(f"{where}: {' '.join(p)}" for where, p in problems.items()))


def workspace_text(texts: Any, code: str, key: str) -> str | None:
    """The workspace's own text ``key`` for language ``code``; None when unset."""
    own = texts.get(code) if isinstance(texts, dict) else None
    found = own.get(key) if isinstance(own, dict) else None
    return found if isinstance(found, str) and found.strip() else None
