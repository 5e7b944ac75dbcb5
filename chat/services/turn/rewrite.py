"""A follow-up made standalone by the generative model, before retrieval.

One short call (at most ``REWRITE_MAX_TOKENS``, greedy, within
``QUERY_REWRITE_TIMEOUT_SECONDS``), made only when the question leans on the
conversation (``followup_search.needs_context``, decided from its words). The
rewrite is searched beside the question and the conversation
(``followup_search.retrieval_queries``); when the backend declines, times out,
fails or answers nonsense, the turn retrieves without it — the
non-generative contextualizer alone.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

from django.conf import settings

from chat.backends import BaseGenerativeBackend, ChatMessage
from chat.prompting import HistoryTurn
from daneshyar.exceptions import ApplicationError
from languages import ENGLISH, Language

logger = logging.getLogger(__name__)

REWRITE_MAX_TOKENS = 64
REWRITE_TURNS = 3
REWRITE_TURN_CHARS = 400
REWRITE_SCHEMA = {
    "type": "object",
    "properties": {"question": {"type": "string", "minLength": 1, "maxLength": 300}},
    "required": ["question"],
    "additionalProperties": False,
}
REWRITE_INSTRUCTIONS = (
    "Rewrite the user's last question so that it can be understood without the conversation: "
    "replace pronouns and references with what they refer to, keep every detail the question asks "
    'about, and do not answer it. Reply with JSON: {"question": "..."}.'
)
# Appended for a question in another language than English: the rewrite is
# searched beside the question, so it must be in the question's language
# (the lexical leg matches words; English instructions pull a small model
# towards English).
REWRITE_LANGUAGE_RULE = "The question is in {name}: write the rewritten question in {name}."


def query_rewrite(
    backend: BaseGenerativeBackend,
    *,
    question: str,
    turns: Sequence[HistoryTurn],
    language: Language = ENGLISH,
) -> str | None:
    """The standalone question, in ``language`` (the question's), or None
    (declined, failed, timed out or unusable)."""
    recent = list(turns)[-REWRITE_TURNS:]
    transcript = "\n".join(
        f"User: {t.question[:REWRITE_TURN_CHARS]}\nAssistant: {t.answer[:REWRITE_TURN_CHARS]}" for t in recent
    )
    messages: list[ChatMessage] = [
        {"role": "system", "content": rewrite_instructions(language)},
        {"role": "user", "content": f"Conversation:\n{transcript}\n\nLast question: {question}"},
    ]
    try:
        generation = backend.rewrite(
            messages,
            schema=REWRITE_SCHEMA,
            max_tokens=REWRITE_MAX_TOKENS,
            timeout=settings.QUERY_REWRITE_TIMEOUT_SECONDS,
        )
    except ApplicationError as exc:
        logger.info("Query rewrite skipped: %s", exc.message)
        return None
    if generation is None:
        return None
    try:
        rewritten = json.loads(generation.text)["question"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(rewritten, str) or not rewritten.strip():
        return None
    return " ".join(rewritten.split())[:300]


def rewrite_instructions(language: Language = ENGLISH) -> str:
    """The rewrite's system message: English's as measured, another
    language's with the rule to keep it."""
    if language is ENGLISH:
        return REWRITE_INSTRUCTIONS
    return f"{REWRITE_INSTRUCTIONS}\n{REWRITE_LANGUAGE_RULE.format(name=language.name)}"
