"""The built-in texts a workspace may word itself (``Workspace.texts``:
workspaces/texts.py validates them; chat/wording.py puts them in place of
a language's own), in every language that has a folder.

``TEXT_KEYS``: the replies the service writes itself that a workspace may
set — the documents don't say, small talk, a workspace without documents,
and the "which one do you mean?" form (its question, also its field's
label, and its title); each a field of :class:`~languages.base.Texts`. The
others (the extractive engine's "not found", the guard's safe reply, the
fallback after a failed generation) have settings of their own or none.
"""

from __future__ import annotations

from languages.registry import LANGUAGES

# As long as the single texts may be (``Workspace.no_answer_text``); a
# form's question and title as long as the reply contract lets a label be
# (chat/output.py, MAX_LABEL_CHARS).
MAX_TEXT_CHARS = {
    "no_answer_text": 2000,
    "small_talk_text": 2000,
    "no_documents_text": 2000,
    "which_one": 200,
    "form_title": 200,
}
TEXT_KEYS = tuple(MAX_TEXT_CHARS)


def text_languages() -> tuple[str, ...]:
    """The codes of the languages a workspace may word texts for: every
    language with a folder, in precedence order."""
    return tuple(LANGUAGES)
