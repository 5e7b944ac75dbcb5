"""A turn's generation (no database access): the model's reply, retried
once when invalid, the extractive engine when generation is unavailable and
the workspace chose it (degraded), then the citation check and the guard."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from django.db import connection

from chat.backends import BaseGenerativeBackend, Generation, extractive_backend
from chat.backends.extractive import ExtractiveBackend
from chat.models import Grounding
from chat.output import (
    InvalidOutput,
    ParsedReply,
    citations_check,
    fallback_reply,
    parse_reply,
    safe_reply,
    text_reply,
)
from chat.output_guard import Verdict
from chat.output_guard import evaluate as guard_evaluate
from chat.partial_json import DeltaExtractor
from chat.quoting import marked
from chat.services.turn.choice import with_document_choices
from chat.services.turn.compose import PreparedTurn
from chat.services.turn.naming import turn_asked
from daneshyar.exceptions import LLMUnavailable
from languages import Language
from retrieval.search import ScoredPassage
from workspaces.models import GenerationFallback

logger = logging.getLogger(__name__)

# Attempts per turn: an empty or invalid reply is retried once, then the
# safe fallback answer is stored.
MAX_ATTEMPTS = 2
# The retry samples: a greedy decoder would write the same invalid reply again.
RETRY_TEMPERATURE = 0.7


@dataclass(frozen=True)
class GeneratedTurn:
    """What :func:`turn_generate` returns: the reply, checked, and how it came
    about; :func:`chat.services.turn.turn_finish` stores it."""

    reply: ParsedReply
    is_fallback: bool
    prompt_tokens: int | None
    completion_tokens: int | None
    generation_ms: int
    # The model that answered: the requested one, or the extractive engine
    # when generation was unavailable (degraded).
    model_id: str
    degraded: bool
    # The passages the reply's citations were drawn from.
    passages: list[ScoredPassage]
    # What the output guard found, and the reply it replaced (a block).
    guard: Verdict | None = None
    original: ParsedReply | None = None
    # Set when the reply turned out not to draw on the documents (the
    # extractive engine found no sentence that answers): grounding "none".
    grounding: Grounding | None = None


def release_connection() -> None:
    """Give the database connection back before a slow generation.

    Inside a transaction (tests wrap each test in one) closing would break
    it; a request never runs in one here (no ATOMIC_REQUESTS).
    """
    if not connection.in_atomic_block:
        connection.close()


def calls_a_model(prepared: PreparedTurn) -> bool:
    """Whether generating this turn's reply calls a model server (the slow
    case): not for a reply decided before generation, nor for the
    extractive engine."""
    return prepared.decision.reply is None and prepared.plan.backend.generative


def turn_generate(prepared: PreparedTurn, *, on_delta: Callable[[str], None] | None = None) -> GeneratedTurn:
    """Run the model (no database access). With ``on_delta`` the first attempt
    streams; the retry after an invalid reply does not (its text replaces the
    streamed one in the final message).

    When the generative backend is unavailable, the extractive engine answers
    (``degraded``) if the workspace chose it; otherwise ``LLMUnavailable``
    propagates. ``LLMError`` (the server rejected the request) always does.
    """
    # A guard that may replace the reply holds the stream back until it is checked.
    held = on_delta is not None and prepared.plan.guard.blocks
    generated = _answer(prepared, None if held else on_delta)
    generated = _guarded(prepared, generated)
    if held or generated.original is not None:
        _emit(generated.reply, on_delta)
    return generated


def _guarded(prepared: PreparedTurn, generated: GeneratedTurn) -> GeneratedTurn:
    """The generated reply with the citation check and the workspace's guard applied."""
    guard = prepared.plan.guard
    reply = citations_check(generated.reply, generated.passages, prepared.user_texts)
    verdict = guard_evaluate(guard, reply.response, reply.claims)
    if verdict is None:
        return replace(generated, reply=reply)
    if verdict.action == "block":
        blocked = safe_reply(guard.safe_reply or prepared.language.texts.safe_reply)
        return replace(generated, reply=blocked, guard=verdict, original=reply)
    return replace(generated, reply=reply, guard=verdict)


def _answer(prepared: PreparedTurn, on_delta: Callable[[str], None] | None) -> GeneratedTurn:
    started = time.monotonic()
    decided = prepared.decision.reply
    if decided is not None:
        # Small talk, the documents don't say, or "which one do you mean?": no model runs.
        _emit(decided, on_delta)
        return GeneratedTurn(
            decided, False, None, None, _ms_since(started), prepared.plan.model_id, False, []
        )
    backend = prepared.plan.backend
    if not backend.generative:
        return _extracted(prepared, backend, started, on_delta, degraded=False)
    streamed: list[str] = []

    def delta(text: str) -> None:
        streamed.append(text)
        if on_delta is not None:
            on_delta(text)

    try:
        return _generate(prepared, backend, started, delta if on_delta is not None else None)
    except LLMUnavailable as exc:
        if prepared.request.workspace.on_generation_unavailable != GenerationFallback.EXTRACTIVE:
            raise
        logger.warning("Generation unavailable (%s); answering with the extractive engine", exc.message)
        on_fallback = None if streamed else on_delta
        return _extracted(prepared, extractive_backend(), started, on_fallback, degraded=True)


def _extracted(
    prepared: PreparedTurn,
    engine: ExtractiveBackend,
    started: float,
    on_delta: Callable[[str], None] | None,
    *,
    degraded: bool,
) -> GeneratedTurn:
    """The extractive engine's answer, from the sentences the decision scored;
    when no sentence answers, the workspace's no-answer reply (grounding none)."""
    retrieved = prepared.retrieval.passages
    language = prepared.language
    context = prepared.context
    scoring_context = prepared.retrieval.scoring_context
    reply = engine.answer(
        context.focus,
        retrieved,
        grounded=prepared.grounded,
        assessment=prepared.decision.assessment,
        context=scoring_context,
        language=language,
        asked=turn_asked(
            context.focus, context.earlier_questions, context.language, follow_up=scoring_context is not None
        ),
    )
    grounding = None
    if prepared.grounded and not any(part["source"] for part in reply.response["parts"]):
        reply = text_reply(language.texts.no_answer_text)
        grounding = Grounding.NONE
    _emit(reply, on_delta)
    passages = retrieved if grounding is None else []
    return GeneratedTurn(
        reply, False, None, None, _ms_since(started), engine.model_id, degraded, passages, grounding=grounding
    )


def _generate(
    prepared: PreparedTurn,
    backend: BaseGenerativeBackend,
    started: float,
    on_delta: Callable[[str], None] | None,
) -> GeneratedTurn:
    prompt_tokens: int | None = None
    completion_tokens = 0
    reply: ParsedReply | None = None
    for attempt in range(1, MAX_ATTEMPTS + 1):
        if on_delta is not None and attempt == 1:
            generation = _stream_once(prepared, backend, on_delta, DeltaExtractor())
        else:
            generation = backend.generate(
                prepared.messages,
                schema=prepared.schema,
                max_tokens=prepared.max_tokens,
                temperature=RETRY_TEMPERATURE if attempt > 1 else prepared.request.temperature,
            )
        prompt_tokens = generation.prompt_tokens if generation.prompt_tokens is not None else prompt_tokens
        completion_tokens += generation.completion_tokens or 0
        try:
            reply = with_document_choices(parse_reply(generation.text, prepared.passages), prepared.passages)
            reply = _languages_marked(reply, prepared.language)
            break
        except InvalidOutput as exc:
            logger.warning("Invalid generation (attempt %d of %d): %s", attempt, MAX_ATTEMPTS, exc)
    return GeneratedTurn(
        reply if reply is not None else fallback_reply(prepared.language),
        reply is None,
        prompt_tokens,
        completion_tokens or None,
        _ms_since(started),
        prepared.plan.model_id,
        False,
        prepared.passages,
    )


def _languages_marked(reply: ParsedReply, language: Language) -> ParsedReply:
    """A generated reply's cited parts in another language than the
    question's marked with their own (chat/quoting.py): the model was told to
    answer in the question's language, and a part that quotes a passage as
    written instead says so."""
    parts = marked(reply.response["parts"], language)
    return replace(reply, response={**reply.response, "parts": parts})


def _emit(reply: ParsedReply, on_delta: Callable[[str], None] | None) -> None:
    """Stream an answer that was not generated token by token: one delta a part."""
    if on_delta is None:
        return
    rendered = ""
    for part in reply.response["parts"]:
        text = part["text"] if not rendered else " " + part["text"]
        rendered += text
        on_delta(text)


def _stream_once(
    prepared: PreparedTurn,
    backend: BaseGenerativeBackend,
    on_delta: Callable[[str], None],
    extractor: DeltaExtractor,
) -> Generation:
    final: Generation | None = None
    chunks: list[str] = []
    for item in backend.stream(
        prepared.messages,
        schema=prepared.schema,
        max_tokens=prepared.max_tokens,
        temperature=prepared.request.temperature,
    ):
        if isinstance(item, Generation):
            final = item
            continue
        chunks.append(item)
        delta = extractor.feed(item)
        if delta:
            on_delta(delta)
    return final if final is not None else Generation(text="".join(chunks))


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
