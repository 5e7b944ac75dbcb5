"""Small talk: greetings, thanks and goodbyes get a short reply without sources.

Searching the documents for "hi" finds nothing worth citing, and answering
"thanks" with "the documents don't say" reads as a malfunction. A message
that is nothing but small talk in one of the languages (each language's
``conversation.small_talk``, languages/<code>/conversation.py; English's
list also has greetings of languages without a folder) — a question about
the documents is never small talk, since it has more words than these
phrases — is answered with the workspace's ``small_talk_text`` (or, while
the workspace keeps the default, the built-in one of the language whose
phrases it is), ``grounding: none``, without retrieval.
"""

from __future__ import annotations

from chat.output import text_reply
from chat.services.turn.decide import Decision, Intent
from chat.wording import workspace_language
from languages import ENGLISH, LANGUAGES, Language, normalize
from languages.scripts import SCRIPTS
from workspaces.models import Workspace

MAX_CHARS = 80


def small_talk(workspace: Workspace, message: str, language: Language) -> Decision:
    """The reply to ``message``, small talk: the workspace's ``small_talk_text``
    in the language whose phrase it is (:func:`small_talk_language`), else
    in ``language``, the turn's."""
    spoken = small_talk_language(message, language) or language
    return Decision(Intent.SMALL_TALK, reply=text_reply(small_talk_text(workspace, spoken)))


def small_talk_text(workspace: Workspace, language: Language) -> str:
    """The workspace's reply to small talk in ``language`` (the order of
    decide.py: its own text, its single text when changed, the language's)."""
    return workspace_language(workspace, language).texts.small_talk_text


def small_talk_language(message: str, language: Language) -> Language | None:
    """The language in which ``message`` is only a greeting, thanks, a goodbye
    or an acknowledgement, or None when it is more. ``language`` (the
    turn's) is tried first, then every language: a short "مرحبا" or "Super!"
    says too little to detect. A turn held in English (the default, also for
    a message that does not tell) is answered in English when the message is
    written in English's script only ("Super!" says no more German than
    English); otherwise in the language whose phrase it is."""
    text = message.strip()
    if not _short(text):
        return None
    spoken = next((c for c in (language, *LANGUAGES.values()) if _spoken_in(text, c)), None)
    if spoken is None:
        return None
    if language is ENGLISH and not _other_script(text):
        return ENGLISH
    return spoken


def is_small_talk(message: str) -> bool:
    """Whether ``message`` is only small talk in some language (which one,
    and the reply's language, wait for the turn's language:
    :func:`small_talk_language`)."""
    text = message.strip()
    return _short(text) and any(_spoken_in(text, language) for language in LANGUAGES.values())


def _short(text: str) -> bool:
    return 0 < len(text) <= MAX_CHARS


def _spoken_in(text: str, language: Language) -> bool:
    return language.conversation.small_talk.match(normalize(text, language.code)) is not None


def _other_script(text: str) -> bool:
    return any(script.block.search(text) for script in SCRIPTS if script is not ENGLISH.script)
