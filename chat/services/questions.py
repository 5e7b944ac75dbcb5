"""Storing a question: in a new session with the history a ``messages``
list brings, or in an existing session whose stored conversation must agree
with that list; and the question a failed turn stored, for its retry. The
rows are written by :mod:`chat.services.messages`."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace

from django.db import transaction

from chat.message_list import Conversation
from chat.models import Message, MessageRole
from chat.services.messages import StoredQuestion, question_append, session_start
from chat.services.sessions import session_title_from
from daneshyar.exceptions import NotFound, ValidationFailed
from workspaces.models import Workspace


def question_save(
    *,
    workspace: Workspace,
    external_user_id: str,
    session_id: uuid.UUID | None,
    conversation: Conversation,
    resumed: uuid.UUID | None = None,
    session_created: bool = False,
) -> StoredQuestion:
    """A turn's question: ``conversation``'s, stored (:func:`question_store`),
    or the question ``resumed`` that a failed attempt stored, its session
    ``session_created`` by that attempt (:func:`question_resume`, an
    Idempotency-Key retry)."""
    if resumed is not None:
        return question_resume(
            workspace=workspace,
            external_user_id=external_user_id,
            question_id=resumed,
            session_created=session_created,
        )
    return question_store(
        workspace=workspace,
        external_user_id=external_user_id,
        session_id=session_id,
        content=conversation.question,
        history=conversation.history,
        system_note=conversation.system,
        history_offset=conversation.history_offset,
    )


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
    number is assigned and the row inserted, never across generation. A
    question in a new session without history is one statement, and so is
    a question in an existing session with its conversation read back
    (:func:`chat.services.messages.question_append`).
    """
    window = max(workspace.history_turns, 1)
    with transaction.atomic():
        if session_id is None:
            stored = session_start(
                workspace=workspace,
                external_user_id=external_user_id,
                title=session_title_from(history[0][0] if history else content),
                system_note=system_note or "",
                content=content,
                history=history,
            )
        else:
            stored = question_append(
                workspace=workspace,
                external_user_id=external_user_id,
                session_id=session_id,
                content=content,
                turns=max(window, len(history)),
            )
            # A 400 here rolls the question back with everything else.
            _history_check(stored, history, system_note, history_offset)
        return replace(stored, earlier=(stored.earlier or [])[-window:])


def question_resume(
    *, workspace: Workspace, external_user_id: str, question_id: uuid.UUID, session_created: bool
) -> StoredQuestion:
    """The question a failed turn stored (an Idempotency-Key retry answers it
    instead of storing it again); 404 if it is gone (its session deleted)."""
    message = (
        Message.objects.select_related("session")
        .filter(
            id=question_id,
            role=MessageRole.USER,
            session__workspace=workspace,
            session__external_user_id=external_user_id,
        )
        .first()
    )
    if message is None:
        raise NotFound()
    return StoredQuestion(message.session, session_created, message)


def _history_check(
    stored: StoredQuestion, history: Sequence[tuple[str, str]], system_note: str | None, offset: int
) -> None:
    """400 unless the session's stored conversation ends with ``history``
    (``stored.earlier`` holds at least as many turns as ``history`` when the session has them)."""
    if system_note is not None and system_note != stored.session.system_note:
        raise ValidationFailed(
            "The messages contradict the stored conversation.",
            fields={"messages[0].content": ["Differs from the system message stored with this session."]},
        )
    if not history:
        return
    earlier = stored.earlier or []
    if len(earlier) < len(history):
        raise ValidationFailed(
            "The messages contradict the stored conversation.",
            fields={
                f"messages[{offset}]": [
                    f"The session holds {len(earlier)} completed turn(s); the messages carry {len(history)}."
                ]
            },
        )
    kept_turns = earlier[-len(history) :]
    for index, ((question, answer), turn) in enumerate(zip(history, kept_turns, strict=True)):
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
