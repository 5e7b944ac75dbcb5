"""Writes for sessions: titles, renames, deletion, and a reply stored in the
position reserved for it (questions: :mod:`chat.services.questions`)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from chat.contract import InvalidCitation, Reply, RetrievedPassage
from chat.models import Grounding, Message, MessageRole, ReviewStatus, Session
from daneshyar.exceptions import NotFound
from workspaces.idempotency import idempotency_records_delete

if TYPE_CHECKING:
    from chat.services.questions import StoredQuestion

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



# The ``model`` of assistant messages the integrator supplied in ``messages``:
# they were not generated here.
CLIENT_MODEL = "client"


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
