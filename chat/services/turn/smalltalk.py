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

import re

from languages import ENGLISH, LANGUAGES, Language, normalize, question_language

MAX_CHARS = 80
_ARABIC_SCRIPT = re.compile("[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]")


def small_talk_language(message: str, language: Language | None = None) -> Language | None:
    """The language in which ``message`` is only a greeting, thanks, a goodbye
    or an acknowledgement, or None when it is more. ``language`` (the
    message's, detected when not given) is tried first, then every language:
    a short "مرحبا" or "Super!" says too little to detect. The reply's
    language is the message's; one that does not tell is answered in English
    when written in Latin letters, and in the language whose phrase it is
    when in the Arabic script."""
    text = message.strip()
    if not text or len(text) > MAX_CHARS:
        return None
    first = language or question_language(text)
    for candidate in (first, *LANGUAGES.values()):
        if candidate.conversation.small_talk.match(normalize(text, candidate.code)) is not None:
            break
    else:
        return None
    if first is ENGLISH and not _ARABIC_SCRIPT.search(text):
        return ENGLISH  # "Super!" says no more German than English
    return candidate


def is_small_talk(message: str, language: Language | None = None) -> bool:
    """Whether ``message`` is only small talk (:func:`small_talk_language`)."""
    return small_talk_language(message, language) is not None
