"""After generation: store the reply (a short transaction), shape it for the
API, and what an Idempotency-Key retry needs to resume a failed turn."""

from __future__ import annotations

from typing import Any

from chat.certificates import certificate_issue
from chat.contract import MessageData, RetrievedPassage
from chat.models import Message
from chat.serializers import message_data
from chat.services.messages import ReplyRecord, reply_store
from chat.services.turn.compose import PreparedTurn
from chat.services.turn.generate import GeneratedTurn, calls_a_model, release_connection, turn_generate
from chat.services.turn.request import TurnResume
from daneshyar import timing
from daneshyar.exceptions import ApplicationError


def turn_finish(prepared: PreparedTurn, generated: GeneratedTurn) -> Message:
    """Store the reply (short transaction)."""
    retrieved: list[RetrievedPassage] = [
        {"passage_id": str(p.passage_id), "resource_id": str(p.resource_id), "score": p.score, "rank": p.rank}
        for p in generated.passages
    ]
    grounding = generated.grounding or prepared.grounding
    reason, figures = prepared.reason(grounding)
    record = ReplyRecord(
        content=generated.reply.content,
        response=generated.reply.response,
        grounding=grounding,
        model=generated.model_id,
        prompt_tokens=generated.prompt_tokens,
        completion_tokens=generated.completion_tokens,
        generation_ms=generated.generation_ms,
        retrieved=retrieved,
        invalid_citations=generated.reply.invalid_citations,
        is_fallback=generated.is_fallback,
        degraded=generated.degraded,
        provenance=prepared.provenance(),
        guard=generated.guard.as_json() if generated.guard is not None else None,
        guard_original=(
            {"content": generated.original.content, "response": generated.original.response}
            if generated.original is not None
            else None
        ),
        answerability=prepared.decision.answerability,
        access=prepared.access.as_json(),
        reason=reason.value if reason is not None else None,
        reason_figures=figures if reason is not None else None,
    )
    return reply_store(question=prepared.question, reply=record)


def reply_data(prepared: PreparedTurn, message: Message) -> MessageData:
    """The stored reply in API shape, signed when the request asked for a certificate."""
    data = message_data(message)
    if prepared.request.certificate:
        data["certificate"] = certificate_issue(
            message, workspace_id=prepared.question.session.workspace_id, access=prepared.access
        )
    return data


def turn_existing_reply(prepared: PreparedTurn) -> Message | None:
    """A resumed turn whose reply was stored after all (its response was lost)."""
    if not prepared.resumed:
        return None
    return Message.objects.filter(
        session_id=prepared.question.session.id, sequence=prepared.question.reply_sequence
    ).first()


def turn_resume_data(prepared: PreparedTurn) -> dict[str, Any]:
    """What an Idempotency-Key retry needs to answer this turn's stored
    question, as the key's record stores it (:meth:`TurnResume.from_json`
    reads it back)."""
    question = prepared.question
    resume = TurnResume(
        session_id=question.session.id, question_id=question.message.id, session_created=question.created
    )
    return resume.as_json()


def turn_error_details(prepared: PreparedTurn, exc: ApplicationError) -> ApplicationError:
    """``exc`` naming the session the turn created or continued (a client that
    sent no session id learns it, and can continue the conversation)."""
    exc.details.setdefault("session_id", str(prepared.question.session.id))
    return exc


def turn_complete(prepared: PreparedTurn) -> Message:
    """Generate and store the reply of a prepared turn (the non-streaming
    path): when a model server will be called, the request's connection is
    released first, so nothing is held while the model runs. A reply decided
    before generation or the extractive engine's takes milliseconds: the
    connection is kept (giving it back costs a reconnection, 3.5 ms)."""
    existing = turn_existing_reply(prepared)
    if existing is not None:
        return existing
    if calls_a_model(prepared):
        release_connection()
    try:
        with timing.phase("generate"):
            generated = turn_generate(prepared)
    except ApplicationError as exc:
        raise turn_error_details(prepared, exc) from None
    with timing.phase("reply"):
        return turn_finish(prepared, generated)
