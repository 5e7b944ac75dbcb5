"""Writes for sessions: titles, renames and deletion (their messages are
written by :mod:`chat.services.messages`)."""

from __future__ import annotations

import uuid

from django.db import transaction

from chat.models import Session
from workspaces.idempotency import idempotency_records_delete

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


def user_sessions_delete(*, workspace_id: uuid.UUID, external_user_id: str) -> int:
    """Delete every session of one end user of the workspace (an evaluation
    run's own user's, when the run ends), as :func:`session_delete` deletes
    one; how many there were."""
    with transaction.atomic():
        ids = list(
            Session.objects.filter(workspace_id=workspace_id, external_user_id=external_user_id).values_list(
                "id", flat=True
            )
        )
        if ids:
            idempotency_records_delete(session_ids=ids)
            Session.objects.filter(id__in=ids).delete()
    return len(ids)
