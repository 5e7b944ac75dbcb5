"""End users' ratings of assistant messages."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from chat.models import Feedback, FeedbackRating, Message, MessageRole, Session
from daneshyar.exceptions import NotFound, ValidationFailed
from workspaces.models import WebhookEvent, Workspace
from workspaces.webhooks.events import webhook_event_emit


@dataclass(frozen=True)
class FeedbackCreated:
    """The payload of ``feedback.created`` (docs/webhooks.md): an end user
    rated an answer for the first time."""

    workspace_id: str
    session_id: str
    message_id: str
    external_user_id: str
    rating: str
    comment: str

    @classmethod
    def of(cls, feedback: Feedback, session: Session) -> FeedbackCreated:
        return cls(
            workspace_id=str(session.workspace_id),
            session_id=str(session.id),
            message_id=str(feedback.message_id),
            external_user_id=feedback.external_user_id,
            rating=str(feedback.rating),
            comment=feedback.comment,
        )


@transaction.atomic
def feedback_upsert(
    *,
    workspace: Workspace,
    session_id: uuid.UUID,
    message_id: uuid.UUID,
    external_user_id: str,
    rating: FeedbackRating | str,
    comment: str = "",
) -> tuple[Feedback, bool]:
    """Record ``external_user_id``'s rating of an assistant message; a repeat replaces it.

    The session must belong to that end user in that workspace: another end
    user's session, or a message of another session, is 404 exactly like a
    missing one. Returns the feedback and whether it was created.

    Feedback is activity: the session's ``updated_at`` moves, so an
    incremental export (``updated_since``) picks the new rating up.
    """
    session = Session.objects.filter(
        workspace=workspace, id=session_id, external_user_id=external_user_id
    ).first()
    if session is None:
        raise NotFound()
    message = Message.objects.filter(session=session, id=message_id).first()
    if message is None:
        raise NotFound()
    if message.role != MessageRole.ASSISTANT:
        raise ValidationFailed(
            "Feedback can only be given on assistant messages.",
            fields={"message_id": ["This is not an assistant message."]},
        )
    feedback, created = Feedback.objects.update_or_create(
        message=message,
        external_user_id=external_user_id,
        defaults={"rating": rating, "comment": comment},
    )
    Session.objects.filter(pk=session.pk).update(updated_at=timezone.now())
    if created:
        webhook_event_emit(
            workspace_id=workspace.id,
            event_type=WebhookEvent.FEEDBACK_CREATED,
            subject_id=str(message.id),
            data=FeedbackCreated.of(feedback, session),
        )
    return feedback, created
