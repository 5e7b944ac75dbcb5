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
from dataclasses import dataclass

from django.conf import settings
from django.db import connection

from chat import selectors
from chat.backends import BaseBackend, ChatMessage, Generation, get_backend, resolve_model
from chat.backends.base import JsonSchema
from chat.contract import PromptTrace
from chat.models import Grounding, Message
from chat.output import InvalidOutput, ParsedReply, fallback_reply, output_schema, parse_reply
from chat.partial_json import DeltaExtractor
from chat.prompting import build_messages
from chat.services.sessions import StoredQuestion, question_store, reply_store
from daneshyar.exceptions import Forbidden
from resources.selectors import ready_resources_exist
from retrieval.search import ScoredPassage, named_resources_validate, search
from workspaces.models import ApiKey, Workspace

logger = logging.getLogger(__name__)

# Attempts per turn: an empty or invalid reply is retried once, then the
# safe fallback answer is stored.
MAX_ATTEMPTS = 2
# The retry samples: a greedy decoder would write the same invalid reply again.
RETRY_TEMPERATURE = 0.7


@dataclass
class PreparedTurn:
    question: StoredQuestion
    model_id: str
    backend: BaseBackend
    grounding: Grounding
    passages: list[ScoredPassage]
    messages: list[ChatMessage]
    schema: JsonSchema
    include_trace: bool

    def trace(self) -> PromptTrace:
        return {
            "passages": [
                {"passage_id": str(p.passage_id), "resource_id": str(p.resource_id), "score": p.score}
                for p in self.passages
            ],
            "messages": [{"role": m["role"], "content": m["content"]} for m in self.messages],
        }


@dataclass
class TurnOutcome:
    reply: ParsedReply
    is_fallback: bool
    prompt_tokens: int | None
    completion_tokens: int | None
    generation_ms: int


def _retrieve(
    workspace: Workspace, question: str, resource_ids: Sequence[uuid.UUID]
) -> tuple[Grounding, list[ScoredPassage]]:
    if not ready_resources_exist(workspace=workspace):
        return Grounding.GENERAL_KNOWLEDGE, []
    passages = search(
        workspace=workspace,
        query=question[: settings.MAX_QUERY_CHARS],
        resource_ids=list(resource_ids) or None,
    )
    return Grounding.DOCUMENTS, passages


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
) -> PreparedTurn:
    """Everything before generation. Raises 403/400/404 before storing anything."""
    if include_prompt_trace and not api_key.is_admin:
        raise Forbidden("include_prompt_trace needs an API key with the admin scope.")
    model_id = str(resolve_model(model)["id"])
    backend = get_backend(model_id)
    # Unknown ids are a 400 even when the workspace has nothing ready yet.
    named_resources_validate(workspace=workspace, resource_ids=resource_ids)
    # Stored before retrieval: a wrong session is a 404 before the embedding
    # runs, and nothing below can fail with a 4xx any more.
    stored = question_store(
        workspace=workspace, external_user_id=external_user_id, session_id=session_id, content=message
    )
    grounding, passages = _retrieve(workspace, message, resource_ids)
    history = selectors.history_turns(
        session_id=stored.session.id, before_sequence=stored.message.sequence, turns=workspace.history_turns
    )
    messages = build_messages(
        workspace_prompt=workspace.system_prompt,
        history=history,
        question=message,
        passages=passages,
        grounded=grounding == Grounding.DOCUMENTS,
    )
    return PreparedTurn(
        question=stored,
        model_id=model_id,
        backend=backend,
        grounding=grounding,
        passages=passages,
        messages=messages,
        schema=output_schema(),
        include_trace=include_prompt_trace,
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

    Raises ``LLMUnavailable`` when the backend is down or timed out.
    """
    started = time.monotonic()
    prompt_tokens: int | None = None
    completion_tokens = 0
    for attempt in range(1, MAX_ATTEMPTS + 1):
        if on_delta is not None and attempt == 1:
            generation = _stream_once(prepared, on_delta, DeltaExtractor())
        else:
            generation = prepared.backend.generate(
                prepared.messages,
                schema=prepared.schema,
                temperature=RETRY_TEMPERATURE if attempt > 1 else None,
            )
        prompt_tokens = generation.prompt_tokens if generation.prompt_tokens is not None else prompt_tokens
        completion_tokens += generation.completion_tokens or 0
        try:
            reply = parse_reply(generation.text, prepared.passages)
        except InvalidOutput as exc:
            logger.warning("Invalid generation (attempt %d of %d): %s", attempt, MAX_ATTEMPTS, exc)
            continue
        return TurnOutcome(reply, False, prompt_tokens, completion_tokens or None, _ms_since(started))
    return TurnOutcome(fallback_reply(), True, prompt_tokens, completion_tokens or None, _ms_since(started))


def _stream_once(
    prepared: PreparedTurn, on_delta: Callable[[str], None], extractor: DeltaExtractor
) -> Generation:
    final: Generation | None = None
    chunks: list[str] = []
    for item in prepared.backend.stream(prepared.messages, schema=prepared.schema):
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
    return reply_store(
        question=prepared.question,
        content=outcome.reply.content,
        response=outcome.reply.response,
        grounding=prepared.grounding,
        model=prepared.model_id,
        prompt_tokens=outcome.prompt_tokens,
        completion_tokens=outcome.completion_tokens,
        generation_ms=outcome.generation_ms,
        retrieved=[
            {
                "passage_id": str(p.passage_id),
                "resource_id": str(p.resource_id),
                "score": p.score,
                "rank": p.rank,
            }
            for p in prepared.passages
        ],
        invalid_citations=outcome.reply.invalid_citations,
        is_fallback=outcome.is_fallback,
    )


def turn_complete(prepared: PreparedTurn) -> Message:
    """Generate and store the reply of a prepared turn (the non-streaming
    path): the request's connection is released first, so nothing is held
    while the model runs."""
    release_connection()
    outcome = turn_generate(prepared)
    return turn_finish(prepared, outcome)
