"""A workspace's own texts per language (``Workspace.texts``), validated.

``{"fa": {"no_answer_text": "…", "small_talk_text": "…"}, "de": {…}}``: for
a turn held in a language, a text set here for that language wins over the
workspace's single ``no_answer_text`` / ``small_talk_text`` and over the
built-in text of the language (chat/wording.py puts them in place). The
languages and keys are the ``languages`` package's: every language with a
folder, and the texts a workspace may set (languages/texts.py).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

from languages.texts import MAX_TEXT_CHARS, TEXT_KEYS, text_languages

WorkspaceTexts = dict[str, dict[str, str]]


def texts_problems(value: Any) -> dict[str, list[str]]:
    """What is wrong with a ``texts`` value, keyed by the path of each
    problem (``texts.fa.which_one``); empty when it is valid."""
    if not isinstance(value, dict):
        return {"texts": ["Expected an object keyed by language code."]}
    problems: dict[str, list[str]] = {}
    languages = text_languages()
    for code, texts in value.items():
        where = f"texts.{code}"
        if code not in languages:
            problems[where] = [f"Unknown language; one of {', '.join(languages)}."]
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
