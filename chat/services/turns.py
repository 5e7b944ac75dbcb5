"""One chat turn: prepare (validate, store the question, retrieve, build the
prompt), generate (no database), finish (store the reply).

The phases are separate so that no transaction or database connection is
held while the model runs: the views release the request's connection
between :func:`turn_prepare` and :func:`turn_generate`, and the streaming
view runs generate + finish in a worker thread that completes whether or not
the client is still listening.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection

from chat import selectors
from chat.backends import BaseBackend, ChatMessage, Generation, extractive_backend, get_backend, resolve_model
from chat.backends.base import JsonSchema
from chat.backends.extractive import ExtractiveBackend
from chat.certificates import certificate_issue
from chat.contract import MessageData, PromptTrace, RetrievedPassage
from chat.conversation import messages_hash
from chat.guard import Policy, Verdict
from chat.guard import evaluate as guard_evaluate
from chat.models import Grounding, Message
from chat.output import (
    InvalidOutput,
    ParsedReply,
    citations_check,
    fallback_reply,
    output_schema,
    parse_reply,
    safe_reply,
)
from chat.partial_json import DeltaExtractor
from chat.prompting import FittedPrompt, QuestionTooLong, fit_messages, question_fits
from chat.serializers import message_data
from chat.services.guard import guard_policy_load
from chat.services.sessions import StoredQuestion, question_resume, question_store, reply_store
from daneshyar.exceptions import ApplicationError, Forbidden, LLMUnavailable, ValidationFailed
from resources.selectors import ready_resources_exist
from retrieval.search import ScoredPassage, named_resources_validate, search
from workspaces.models import ApiKey, GenerationFallback, Workspace

logger = logging.getLogger(__name__)

# Attempts per turn: an empty or invalid reply is retried once, then the
# safe fallback answer is stored.
MAX_ATTEMPTS = 2
# The retry samples: a greedy decoder would write the same invalid reply again.
RETRY_TEMPERATURE = 0.7


@dataclass
class PreparedTurn:
    question: StoredQuestion
    question_text: str
    model_id: str
    backend: BaseBackend
    grounding: Grounding
    # What retrieval returned, best first.
    retrieved: list[ScoredPassage]
    # The prompt: what a generative backend is sent; for the extractive
    # engine, the question and passages it answers from, in the same form.
    prompt: FittedPrompt
    schema: JsonSchema
    include_trace: bool
    on_generation_unavailable: str
    # Per-request generation options (the OpenAI-compatible endpoint's
    # max_tokens and temperature); None: the backend's defaults.
    max_tokens: int | None = None
    temperature: float | None = None
    # The workspace's output guard (rules, safe reply, claims checks).
    guard: Policy = field(default_factory=Policy)
    # The user's own words in this turn (question, history, the integrator's
    # note): a cited part made of them loses its citation.
    user_texts: list[str] = field(default_factory=list)
    # Sign the reply (certificate: true on the request).
    certificate: bool = False
    # An Idempotency-Key retry answering a question stored by a failed attempt.
    resumed: bool = False

    @property
    def grounded(self) -> bool:
        return self.grounding == Grounding.DOCUMENTS

    @property
    def passages(self) -> list[ScoredPassage]:
        """The passages the model sees, numbered 1..n: citations index into these."""
        return self.prompt.passages

    @property
    def messages(self) -> list[ChatMessage]:
        return self.prompt.messages

    def provenance(self) -> dict[str, str]:
        """``provenance`` of the reply: the hash of the exact messages it came from."""
        return {"messages_hash": messages_hash(self.messages)}

    def trace(self) -> PromptTrace:
        trace: PromptTrace = {
            "passages": [
                {"passage_id": str(p.passage_id), "resource_id": str(p.resource_id), "score": p.score}
                for p in self.passages
            ],
            "messages": [{"role": m["role"], "content": m["content"]} for m in self.messages],
        }
        prompt = self.prompt
        if prompt.budget is not None:
            trace["budget"] = {
                "context_length": prompt.budget + self.backend.max_tokens + settings.PROMPT_TOKEN_MARGIN,
                "max_tokens": self.backend.max_tokens,
                "prompt_budget": prompt.budget,
                "prompt_tokens": prompt.prompt_tokens,
            }
            trace["dropped"] = {
                "passages": [
                    {"passage_id": str(p.passage_id), "resource_id": str(p.resource_id), "score": p.score}
                    for p in prompt.dropped_passages
                ],
                "history": [
                    {"user_message_id": str(t.question_id), "assistant_message_id": str(t.answer_id)}
                    for t in prompt.dropped_turns
                ],
                "truncated_passage_id": (
                    str(prompt.truncated_passage_id) if prompt.truncated_passage_id is not None else None
                ),
            }
        return trace


@dataclass
class TurnOutcome:
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


def _retrieve(workspace: Workspace, question: str, resource_ids: Sequence[uuid.UUID]) -> list[ScoredPassage]:
    return search(
        workspace=workspace,
        query=question[: settings.MAX_QUERY_CHARS],
        resource_ids=list(resource_ids) or None,
    )


def prompt_budget(backend: BaseBackend) -> int | None:
    """Tokens a prompt may take: ``context_length - max_tokens - margin``
    (None when the backend has no window or does not report one)."""
    try:
        length = backend.context_length()
    except ApplicationError:
        length = None  # the server is down: the generation will say so
    if length is None:
        return None
    return max(0, length - backend.max_tokens - settings.PROMPT_TOKEN_MARGIN)


def _counter(backend: BaseBackend) -> Callable[[list[ChatMessage]], int]:
    def count(messages: list[ChatMessage]) -> int:
        try:
            return backend.count_tokens(messages)
        except ApplicationError:
            # The server cannot count now: estimate (on the long side).
            return BaseBackend.count_tokens(backend, messages)

    return count


def turn_prepare(
    *,
    api_key: ApiKey,
    workspace: Workspace,
    external_user_id: str,
    message: str,
    session_id: uuid.UUID | None = None,
    resource_ids: Sequence[uuid.UUID] = (),
    model: str | None = None,
    include_prompt_trace: bool = False,
    history: Sequence[tuple[str, str]] = (),
    system_note: str | None = None,
    history_offset: int = 0,
    max_tokens: int | None = None,
    temperature: float | None = None,
    certificate: bool = False,
    resume: dict[str, str] | None = None,
) -> PreparedTurn:
    """Everything before generation. Raises 403/400/404 before storing anything.

    ``history`` and ``system_note`` come from a ``messages`` list
    (chat/conversation.py; ``history_offset`` is where its history starts, for
    error field names): stored with a new session, checked against an
    existing one.
    """
    if include_prompt_trace and not settings.PROMPT_TRACE_ENABLED:
        raise Forbidden("Prompt traces are not enabled on this deployment (PROMPT_TRACE_ENABLED).")
    if include_prompt_trace and not api_key.is_admin:
        raise Forbidden("include_prompt_trace needs an API key with the admin scope.")
    model_id = str(resolve_model(model)["id"])
    backend = get_backend(model_id)
    # Unknown ids are a 400 even when the workspace has nothing ready yet.
    named_resources_validate(workspace=workspace, resource_ids=resource_ids)
    grounding = (
        Grounding.DOCUMENTS if ready_resources_exist(workspace=workspace) else Grounding.GENERAL_KNOWLEDGE
    )
    generative = not isinstance(backend, ExtractiveBackend)
    guard = guard_policy_load(workspace=workspace)
    claims = guard.claims if generative else ()
    budget = prompt_budget(backend) if generative else None
    count = _counter(backend)
    if generative:
        try:
            question_fits(
                count=count,
                budget=budget,
                workspace_prompt=workspace.system_prompt,
                question=message,
                grounded=grounding == Grounding.DOCUMENTS,
                system_note=system_note or "",
            )
        except QuestionTooLong as exc:
            raise ValidationFailed(
                "The message is too long for this model.",
                fields={
                    "message": [
                        f"The message is too long for model {model_id!r}: with the instructions it takes "
                        f"{exc.tokens} tokens, and at most {exc.budget} fit beside the reply. Shorten it."
                    ]
                },
            ) from None
    # Stored before retrieval: a wrong session is a 404 before the embedding
    # runs, and nothing below can fail with a 4xx any more.
    if resume is not None:
        # An Idempotency-Key retry of a turn that failed after storing its question.
        stored = question_resume(workspace=workspace, external_user_id=external_user_id, resume=resume)
    else:
        stored = question_store(
            workspace=workspace,
            external_user_id=external_user_id,
            session_id=session_id,
            content=message,
            history=history,
            system_note=system_note,
            history_offset=history_offset,
        )
    passages = _retrieve(workspace, message, resource_ids) if grounding == Grounding.DOCUMENTS else []
    turns = (
        selectors.history_turns(
            session_id=stored.session.id,
            before_sequence=stored.message.sequence,
            turns=workspace.history_turns,
        )
        if generative
        else []  # the extractive engine answers the question alone
    )
    prompt = fit_messages(
        count=count,
        budget=budget,
        workspace_prompt=workspace.system_prompt,
        history=turns,
        question=message,
        passages=passages,
        grounded=grounding == Grounding.DOCUMENTS,
        system_note=stored.session.system_note,
        claims=claims,
    )
    return PreparedTurn(
        question=stored,
        question_text=message,
        model_id=model_id,
        backend=backend,
        grounding=grounding,
        retrieved=passages,
        prompt=prompt,
        schema=output_schema(claims=len(claims)),
        include_trace=include_prompt_trace,
        on_generation_unavailable=workspace.on_generation_unavailable,
        max_tokens=min(max_tokens, backend.max_tokens) if max_tokens else None,
        temperature=temperature,
        guard=guard,
        certificate=certificate,
        resumed=resume is not None,
        user_texts=[
            message,
            stored.session.system_note,
            *(text for turn in turns for text in (turn.question, turn.answer)),
            *(text for pair in history for text in pair),
        ],
    )


def release_connection() -> None:
    """Give the database connection back before a slow generation.

    Inside a transaction (tests wrap each test in one) closing would break
    it; a request never runs in one here (no ATOMIC_REQUESTS).
    """
    if not connection.in_atomic_block:
        connection.close()


def turn_generate(prepared: PreparedTurn, *, on_delta: Callable[[str], None] | None = None) -> TurnOutcome:
    """Run the model (no database access). With ``on_delta`` the first attempt
    streams; the retry after an invalid reply does not (its text replaces the
    streamed one in the final message).

    When the generative backend is unavailable, the extractive engine answers
    (``degraded``) if the workspace chose it; otherwise ``LLMUnavailable``
    propagates. ``LLMError`` (the server rejected the request) always does.
    """
    # A guard that may replace the reply holds the stream back until it is checked.
    held = on_delta is not None and prepared.guard.blocks
    outcome = _answer(prepared, None if held else on_delta)
    outcome = _guarded(prepared, outcome)
    if held or outcome.original is not None:
        _emit(outcome.reply, on_delta)
    return outcome


def _guarded(prepared: PreparedTurn, outcome: TurnOutcome) -> TurnOutcome:
    """The outcome with the citation check and the workspace's guard applied."""
    outcome.reply = citations_check(outcome.reply, outcome.passages, prepared.user_texts)
    verdict = guard_evaluate(prepared.guard, outcome.reply.response, outcome.reply.claims)
    if verdict is None:
        return outcome
    outcome.guard = verdict
    if verdict.action == "block":
        outcome.original = outcome.reply
        outcome.reply = safe_reply(prepared.guard.safe_reply)
    return outcome


def _answer(prepared: PreparedTurn, on_delta: Callable[[str], None] | None) -> TurnOutcome:
    started = time.monotonic()
    backend = prepared.backend
    if isinstance(backend, ExtractiveBackend):
        reply = backend.answer(prepared.question_text, prepared.retrieved, grounded=prepared.grounded)
        _emit(reply, on_delta)
        return TurnOutcome(
            reply, False, None, None, _ms_since(started), prepared.model_id, False, prepared.retrieved
        )
    streamed: list[str] = []

    def delta(text: str) -> None:
        streamed.append(text)
        if on_delta is not None:
            on_delta(text)

    try:
        return _generate(prepared, started, delta if on_delta is not None else None)
    except LLMUnavailable as exc:
        if prepared.on_generation_unavailable != GenerationFallback.EXTRACTIVE:
            raise
        logger.warning("Generation unavailable (%s); answering with the extractive engine", exc.message)
        engine = extractive_backend()
        reply = engine.answer(prepared.question_text, prepared.retrieved, grounded=prepared.grounded)
        if not streamed:
            _emit(reply, on_delta)
        return TurnOutcome(
            reply, False, None, None, _ms_since(started), engine.model_id, True, prepared.retrieved
        )


def _generate(prepared: PreparedTurn, started: float, on_delta: Callable[[str], None] | None) -> TurnOutcome:
    prompt_tokens: int | None = None
    completion_tokens = 0
    reply: ParsedReply | None = None
    for attempt in range(1, MAX_ATTEMPTS + 1):
        if on_delta is not None and attempt == 1:
            generation = _stream_once(prepared, on_delta, DeltaExtractor())
        else:
            generation = prepared.backend.generate(
                prepared.messages,
                schema=prepared.schema,
                max_tokens=prepared.max_tokens,
                temperature=RETRY_TEMPERATURE if attempt > 1 else prepared.temperature,
            )
        prompt_tokens = generation.prompt_tokens if generation.prompt_tokens is not None else prompt_tokens
        completion_tokens += generation.completion_tokens or 0
        try:
            reply = parse_reply(generation.text, prepared.passages)
            break
        except InvalidOutput as exc:
            logger.warning("Invalid generation (attempt %d of %d): %s", attempt, MAX_ATTEMPTS, exc)
    return TurnOutcome(
        reply if reply is not None else fallback_reply(),
        reply is None,
        prompt_tokens,
        completion_tokens or None,
        _ms_since(started),
        prepared.model_id,
        False,
        prepared.passages,
    )


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
    prepared: PreparedTurn, on_delta: Callable[[str], None], extractor: DeltaExtractor
) -> Generation:
    final: Generation | None = None
    chunks: list[str] = []
    for item in prepared.backend.stream(
        prepared.messages,
        schema=prepared.schema,
        max_tokens=prepared.max_tokens,
        temperature=prepared.temperature,
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


def turn_finish(prepared: PreparedTurn, outcome: TurnOutcome) -> Message:
    """Store the reply (short transaction)."""
    retrieved: list[RetrievedPassage] = [
        {"passage_id": str(p.passage_id), "resource_id": str(p.resource_id), "score": p.score, "rank": p.rank}
        for p in outcome.passages
    ]
    return reply_store(
        question=prepared.question,
        content=outcome.reply.content,
        response=outcome.reply.response,
        grounding=prepared.grounding,
        model=outcome.model_id,
        prompt_tokens=outcome.prompt_tokens,
        completion_tokens=outcome.completion_tokens,
        generation_ms=outcome.generation_ms,
        retrieved=retrieved,
        invalid_citations=outcome.reply.invalid_citations,
        is_fallback=outcome.is_fallback,
        degraded=outcome.degraded,
        provenance=prepared.provenance(),
        guard=outcome.guard.as_json() if outcome.guard is not None else None,
        guard_original=(
            {"content": outcome.original.content, "response": outcome.original.response}
            if outcome.original is not None
            else None
        ),
    )


def reply_data(prepared: PreparedTurn, message: Message) -> MessageData:
    """The stored reply in API shape, signed when the request asked for a certificate."""
    data = message_data(message)
    if prepared.certificate:
        data["certificate"] = certificate_issue(message, workspace_id=prepared.question.session.workspace_id)
    return data


def turn_existing_reply(prepared: PreparedTurn) -> Message | None:
    """A resumed turn whose reply was stored after all (its response was lost)."""
    if not prepared.resumed:
        return None
    return Message.objects.filter(
        session_id=prepared.question.session.id, sequence=prepared.question.reply_sequence
    ).first()


def turn_resume_data(prepared: PreparedTurn) -> dict[str, str]:
    """What an Idempotency-Key retry needs to answer this turn's stored question."""
    return {
        "session_id": str(prepared.question.session.id),
        "question_id": str(prepared.question.message.id),
        "created": "1" if prepared.question.created else "0",
    }


def turn_error_details(prepared: PreparedTurn, exc: ApplicationError) -> ApplicationError:
    """``exc`` naming the session the turn created or continued (a client that
    sent no session id learns it, and can continue the conversation)."""
    exc.details.setdefault("session_id", str(prepared.question.session.id))
    return exc


def turn_complete(prepared: PreparedTurn) -> Message:
    """Generate and store the reply of a prepared turn (the non-streaming
    path): the request's connection is released first, so nothing is held
    while the model runs."""
    existing = turn_existing_reply(prepared)
    if existing is not None:
        return existing
    release_connection()
    try:
        outcome = turn_generate(prepared)
    except ApplicationError as exc:
        raise turn_error_details(prepared, exc) from None
    return turn_finish(prepared, outcome)
