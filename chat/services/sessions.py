"""Writes for sessions: titles, renames, deletion, and the ordered insertion
of messages (the only place sequence numbers are assigned)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from chat.contract import InvalidCitation, Reply, ResponseType, RetrievedPassage
from chat.models import Grounding, Message, MessageRole, ReviewStatus, Session
from chat.selectors import history_turns
from daneshyar.exceptions import NotFound, ValidationFailed
from workspaces.idempotency import idempotency_records_delete
from workspaces.models import Workspace

TITLE_MAX_CHARS = 80


def session_title_from(message: str) -> str:
    """A title from the first message: whitespace collapsed, at most 80
    characters, cut at a word boundary (with an ellipsis) when longer."""
    text = " ".join(message.split())
    if len(text) <= TITLE_MAX_CHARS:
        return text or "New conversation"
    cut = text[: TITLE_MAX_CHARS - 1]
    space = cut.rfind(" ")
    if space >= TITLE_MAX_CHARS // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"


def session_update(*, session: Session, title: str) -> Session:
    session.title = title.strip()[:200]
    session.save(update_fields=["title", "updated_at"])
    return session


def session_delete(*, session: Session) -> None:
    """Delete the session, its messages and feedback, and the Idempotency-Key
    records that would replay them."""
    with transaction.atomic():
        idempotency_records_delete(session_ids=[session.id])
        session.delete()


@dataclass(frozen=True)
class StoredQuestion:
    session: Session
    created: bool
    message: Message

    @property
    def reply_sequence(self) -> int:
        """The slot reserved for this question's reply."""
        return self.message.sequence + 1


def _next_question_sequence(last: int | None) -> int:
    # Questions take even positions and their replies the odd one right
    # after, reserved at once: however concurrent turns finish, each reply
    # sits next to its question. An unanswered question leaves a gap.
    return 0 if last is None else (last // 2 + 1) * 2


# The ``model`` of assistant messages the integrator supplied in ``messages``:
# they were not generated here.
CLIENT_MODEL = "client"


def question_store(
    *,
    workspace: Workspace,
    external_user_id: str,
    session_id: uuid.UUID | None,
    content: str,
    history: Sequence[tuple[str, str]] = (),
    system_note: str | None = None,
    history_offset: int = 0,
) -> StoredQuestion:
    """Store the user's message in a new or existing session (404 if the
    session is not this end user's in this workspace).

    ``history`` and ``system_note`` come from a ``messages`` list. A new
    session stores them before the question (its next turn continues that
    conversation); an existing one must agree with them — its stored turns
    end with ``history``, its note is ``system_note`` — or nothing is stored
    and the request is a 400 (the server's copy is the truth;
    ``history_offset`` is the index of the first history message in the
    request, for the error's field names).

    Short transaction: the session row is locked only while the sequence
    number is assigned and the row inserted, never across generation.
    """
    with transaction.atomic():
        if session_id is None:
            session = Session.objects.create(
                workspace=workspace,
                external_user_id=external_user_id,
                title=session_title_from(history[0][0] if history else content),
                system_note=system_note or "",
                message_count=2 * len(history) + 1,
            )
            _history_store(session, history)
            message = Message.objects.create(
                session=session, sequence=2 * len(history), role=MessageRole.USER, content=content
            )
            return StoredQuestion(session, True, message)
        # Lock the row and count the question in one statement; a 400 below
        # rolls the count back with everything else.
        params = [timezone.now(), session_id, workspace.id, external_user_id]
        locked = next(iter(Session.objects.raw(_LOCK_AND_COUNT, params)), None)
        if locked is None:
            raise NotFound()
        _history_check(locked, history, system_note, history_offset)
        return StoredQuestion(locked, False, _question_append(locked, content))


# The session row locked (an UPDATE takes the row lock and, having waited
# for a concurrent turn, sees its committed count) and the question counted.
_LOCK_AND_COUNT = """
UPDATE chat_session SET message_count = message_count + 1, updated_at = %s
WHERE id = %s AND workspace_id = %s AND external_user_id = %s
RETURNING *
"""


def _question_append(locked: Session, content: str) -> Message:
    """The question stored after the messages of ``locked`` (its row locked
    and the question already counted, :data:`_LOCK_AND_COUNT`)."""
    # A separate statement, after the lock is granted: under READ
    # COMMITTED it sees the rows committed by the turn we waited for. (A
    # subquery inside the locking SELECT would use the older snapshot and
    # hand two waiting turns the same position.)
    last = Message.objects.filter(session_id=locked.id).aggregate(last=Max("sequence"))["last"]
    return Message.objects.create(
        session=locked,
        sequence=_next_question_sequence(last),
        role=MessageRole.USER,
        content=content,
    )


@dataclass(frozen=True)
class ReplyRecord:
    """An assistant reply as stored (the columns of its ``Message``)."""

    content: str
    response: Reply
    grounding: Grounding
    model: str
    prompt_tokens: int | None
    completion_tokens: int | None
    generation_ms: int
    retrieved: list[RetrievedPassage]
    invalid_citations: list[InvalidCitation]
    is_fallback: bool
    degraded: bool = False
    provenance: dict[str, str] | None = None
    guard: dict[str, Any] | None = None
    guard_original: dict[str, Any] | None = None
    answerability: float | None = None


def reply_store(*, question: StoredQuestion, reply: ReplyRecord) -> Message:
    """Store the assistant's reply in the slot reserved for it.

    If the session was deleted while the reply was generated, there is nothing
    to attach it to: 404, like any request for a deleted session.
    """
    with transaction.atomic():
        # The UPDATE takes the row lock; no row means the session is gone.
        bumped = Session.objects.filter(id=question.session.id).update(
            message_count=F("message_count") + 1, updated_at=timezone.now()
        )
        if not bumped:
            raise NotFound()
        message = Message.objects.create(
            session_id=question.session.id,
            sequence=question.reply_sequence,
            role=MessageRole.ASSISTANT,
            review_status=ReviewStatus.PENDING if reply.guard else ReviewStatus.NONE,
            **{f.name: getattr(reply, f.name) for f in fields(reply)},
        )
    return message


def question_resume(*, workspace: Workspace, external_user_id: str, resume: dict[str, str]) -> StoredQuestion:
    """The question a failed turn stored (an Idempotency-Key retry answers it
    instead of storing it again); 404 if it is gone (its session deleted)."""
    message = (
        Message.objects.select_related("session")
        .filter(
            id=resume["question_id"],
            role=MessageRole.USER,
            session__workspace=workspace,
            session__external_user_id=external_user_id,
        )
        .first()
    )
    if message is None:
        raise NotFound()
    return StoredQuestion(message.session, resume.get("created") == "1", message)


def _history_store(session: Session, history: Sequence[tuple[str, str]]) -> None:
    rows: list[Message] = []
    for index, (question, answer) in enumerate(history):
        rows.append(Message(session=session, sequence=2 * index, role=MessageRole.USER, content=question))
        reply: Reply = {
            "type": ResponseType.ANSWER,
            "parts": [{"text": answer, "source": None}],
            "form": None,
        }
        rows.append(
            Message(
                session=session,
                sequence=2 * index + 1,
                role=MessageRole.ASSISTANT,
                content=answer,
                response=reply,
                grounding=Grounding.GENERAL_KNOWLEDGE,
                model=CLIENT_MODEL,
            )
        )
    Message.objects.bulk_create(rows)


def _history_check(
    session: Session, history: Sequence[tuple[str, str]], system_note: str | None, offset: int
) -> None:
    """400 unless the session's stored conversation ends with ``history``."""
    if system_note is not None and system_note != session.system_note:
        raise ValidationFailed(
            "The messages contradict the stored conversation.",
            fields={"messages[0].content": ["Differs from the system message stored with this session."]},
        )
    if not history:
        return
    stored = history_turns(session_id=session.id, before_sequence=2**31, turns=len(history))
    if len(stored) < len(history):
        raise ValidationFailed(
            "The messages contradict the stored conversation.",
            fields={
                f"messages[{offset}]": [
                    f"The session holds {len(stored)} completed turn(s); the messages carry {len(history)}."
                ]
            },
        )
    for index, ((question, answer), turn) in enumerate(zip(history, stored, strict=True)):
        for position, sent, kept in ((0, question, turn.question), (1, answer, turn.answer)):
            if sent != kept:
                raise ValidationFailed(
                    "The messages contradict the stored conversation.",
                    fields={
                        f"messages[{offset + 2 * index + position}].content": [
                            "Differs from the stored conversation (the server's copy is the truth)."
                        ]
                    },
                )
