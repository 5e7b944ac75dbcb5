"""The one writer of a session's messages: a question, with its new session
or at the next position of an existing one (the conversation before it read
back in the same statement); the turns a ``messages`` list brings; and a
reply, in the position reserved after its question. Positions are assigned
here alone. Validating a question and its history against the session is
:mod:`chat.services.questions`; titles and deletion are
:mod:`chat.services.sessions`.

The raw statements are composed with :mod:`psycopg.sql` from the models'
own tables and columns, and a row they insert becomes its model instance
through ``Model.from_db``, from the values it was written with
(:mod:`daneshyar.raw_rows`).
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, transaction
from django.db.models import F, Max
from django.utils import timezone
from psycopg import sql

from chat.contract import GuardData, InvalidCitation, Reply, ResponseType, RetrievedPassage
from chat.models import Grounding, Message, MessageRole, ReviewStatus, Session
from chat.prompting import HistoryTurn
from chat.selectors import HistoryRow, history_turns, history_turns_from
from daneshyar.exceptions import NotFound
from daneshyar.raw_rows import columns, insert_params, insert_values, inserted, placeholders, table
from workspaces.models import Workspace

# The ``model`` of assistant messages the integrator supplied in ``messages``:
# they were not generated here.
CLIENT_MODEL = "client"


@dataclass(frozen=True)
class StoredQuestion:
    session: Session
    created: bool
    message: Message
    # The completed turns before the question, oldest first (the workspace's
    # history window), when they were read as it was stored; None otherwise.
    earlier: list[HistoryTurn] | None = None

    @property
    def reply_sequence(self) -> int:
        """The slot reserved for this question's reply."""
        return self.message.sequence + 1


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
    guard: GuardData | None = None
    guard_original: dict[str, Any] | None = None
    answerability: float | None = None
    access: dict[str, Any] | None = None
    reason: str | None = None
    reason_figures: dict[str, Any] | None = None


def _next_question_sequence(last: int | None) -> int:
    # Questions take even positions and their replies the odd one right
    # after, reserved at once: however concurrent turns finish, each reply
    # sits next to its question. An unanswered question leaves a gap.
    return 0 if last is None else (last // 2 + 1) * 2


def session_start(
    *,
    workspace: Workspace,
    external_user_id: str,
    title: str,
    system_note: str,
    content: str,
    history: Sequence[tuple[str, str]] = (),
) -> StoredQuestion:
    """A new session with the turns of a ``messages`` list (``history``,
    returned as ``earlier``) and the question after them. Without history,
    the session and its question are one statement."""
    session = Session(
        workspace=workspace,
        external_user_id=external_user_id,
        title=title,
        system_note=system_note,
        message_count=2 * len(history) + 1,
    )
    question = Message(session=session, sequence=2 * len(history), role=MessageRole.USER, content=content)
    if history:
        session.save(force_insert=True)
        earlier = _history_store(session, history)
        question.save(force_insert=True)
        return StoredQuestion(session, True, question, earlier=earlier)
    session_values = insert_values(session)
    question_values = insert_values(question)
    with connection.cursor() as cursor:
        cursor.execute(
            _session_start_statement(),
            insert_params(Session, session_values, "s_") | insert_params(Message, question_values, "q_"),
        )
    stored_session = inserted(Session, session_values)
    stored_session.workspace = workspace
    stored_question = inserted(Message, question_values)
    stored_question.session = stored_session
    return StoredQuestion(stored_session, True, stored_question, earlier=[])


@functools.cache
def _session_start_statement() -> sql.Composed:
    return sql.SQL(
        """
WITH s AS (INSERT INTO {session} ({session_columns}) VALUES ({session_values}))
INSERT INTO {message} ({question_columns}) VALUES ({question_values})
"""
    ).format(
        session=table(Session),
        session_columns=columns(Session),
        session_values=placeholders(Session, "s_"),
        message=table(Message),
        question_columns=columns(Message),
        question_values=placeholders(Message, "q_"),
    )


def question_append(
    *, workspace: Workspace, external_user_id: str, session_id: uuid.UUID, content: str, turns: int
) -> StoredQuestion:
    """The question stored after the messages of the end user's session
    ``session_id`` (404 if it is not theirs in ``workspace``), and the last
    ``turns`` completed turns before it: one statement
    (:func:`_question_append_statement`)."""
    question = Message(session_id=session_id, sequence=0, role=MessageRole.USER, content=content)
    values = insert_values(question)
    params = insert_params(Message, values, "q_", leave_out="sequence") | {
        "now": timezone.now(),
        "session": session_id,
        "workspace": workspace.id,
        "user": external_user_id,
        "assistant": MessageRole.ASSISTANT.value,
        "asker": MessageRole.USER.value,
        "turns": turns,
    }
    fields_read = [f.attname for f in Session._meta.concrete_fields]
    with connection.cursor() as cursor:
        cursor.execute(_question_append_statement(), params)
        row = cursor.fetchone()
    if row is None:
        raise NotFound()
    locked = Session.from_db(DEFAULT_DB_ALIAS, fields_read, row[: len(fields_read)])
    seen_count, position, earlier_rows = row[len(fields_read) :]
    if position is None:
        # Its position was taken by a turn that committed while this one
        # waited for the lock (the statement's reads are from before the
        # wait): read the position again, now that the lock is held.
        last = Message.objects.filter(session_id=locked.id).aggregate(last=Max("sequence"))["last"]
        question.sequence = _next_question_sequence(last)
        question.save(force_insert=True)
    else:
        question = inserted(Message, values | {"sequence": position})
    question.session = locked
    if seen_count == locked.message_count - 1:
        earlier = history_turns_from([_history_row(r) for r in _json(earlier_rows)])
    else:
        # Another turn of this session committed while this one waited:
        # the conversation read with the question may lack its reply.
        earlier = history_turns(session_id=locked.id, before_sequence=question.sequence, turns=turns)
    return StoredQuestion(locked, False, question, earlier=earlier)


# The statement of :func:`_question_append_statement`, its tables and columns
# left to fill in.
_QUESTION_APPEND = """
WITH locked AS (
    UPDATE {session} SET message_count = message_count + 1, updated_at = %(now)s
    WHERE id = %(session)s AND workspace_id = %(workspace)s AND external_user_id = %(user)s
    RETURNING *
),
question AS (
    INSERT INTO {message} ({columns}, sequence)
    SELECT {values}, coalesce((
        SELECT max(m.sequence) / 2 * 2 + 2 FROM {message} m WHERE m.session_id = locked.id
    ), 0)
    FROM locked
    ON CONFLICT (session_id, sequence) DO NOTHING
    RETURNING sequence
),
earlier AS (
    SELECT r.sequence, r.content, r.id, r.response,
           (SELECT q.content FROM {message} q
            WHERE q.session_id = r.session_id AND q.sequence = r.sequence - 1 AND q.role = %(asker)s)
               AS question_content,
           (SELECT q.id FROM {message} q
            WHERE q.session_id = r.session_id AND q.sequence = r.sequence - 1 AND q.role = %(asker)s)
               AS question_id
    FROM {message} r
    WHERE r.session_id = (SELECT id FROM locked) AND r.role = %(assistant)s
    ORDER BY r.sequence DESC
    LIMIT %(turns)s
)
SELECT {session_columns},
       (SELECT s.message_count FROM {session} s WHERE s.id = %(session)s) AS seen_count,
       (SELECT sequence FROM question) AS question_sequence,
       (SELECT coalesce(json_agg(json_build_array(content, id, response, question_content, question_id)
                                 ORDER BY sequence DESC), '[]')
        FROM earlier) AS earlier
FROM locked
"""


@functools.cache
def _question_append_statement() -> sql.Composed:
    """The session row locked and the question counted (an UPDATE takes the
    row lock and, having waited for a concurrent turn, counts from its
    committed row), the question inserted at the next even position, and
    the last completed turns read back: one round trip. Every read in a
    statement sees the snapshot taken when it began, before any wait for the
    lock; the caller checks that nothing committed meanwhile
    (``seen_count``, the count before this turn's, against the locked
    row's) and reads again when it did. A position already taken by such a
    turn inserts nothing (ON CONFLICT on the session's unique positions)."""
    return sql.SQL(_QUESTION_APPEND).format(
        session=table(Session),
        message=table(Message),
        columns=columns(Message, leave_out="sequence"),
        values=placeholders(Message, "q_", leave_out="sequence"),
        session_columns=columns(Session, table="locked"),
    )


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


def _history_store(session: Session, history: Sequence[tuple[str, str]]) -> list[HistoryTurn]:
    """Store the turns of a ``messages`` list; they are returned as the next question's history."""
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
    return [
        HistoryTurn(question=q.content, answer=a.content, question_id=q.id, answer_id=a.id)
        for q, a in zip(rows[::2], rows[1::2], strict=True)
    ]


def _history_row(row: list[Any]) -> HistoryRow:
    content, answer_id, response, question_content, question_id = row
    return (
        content,
        uuid.UUID(answer_id),
        response,
        question_content,
        uuid.UUID(question_id) if question_id is not None else None,
    )


def _json(value: Any) -> Any:
    """A ``json`` column read by raw SQL (text or already decoded, depending on the driver's loaders)."""
    return json.loads(value) if isinstance(value, str) else value
