"""Storing a question: a new session, or the next position in an existing
one (the only place positions are assigned; a reply takes the one reserved
after its question, :func:`chat.services.sessions.reply_store`), the
history a ``messages`` list brings, and the conversation read back."""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, models, transaction
from django.db.models import Max
from django.utils import timezone

from chat.contract import Reply, ResponseType
from chat.models import Grounding, Message, MessageRole, Session
from chat.prompting import HistoryTurn
from chat.selectors import HistoryRow, history_turns, history_turns_from
from chat.services.sessions import CLIENT_MODEL, session_title_from
from daneshyar.exceptions import NotFound, ValidationFailed
from workspaces.models import Workspace


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


def _next_question_sequence(last: int | None) -> int:
    # Questions take even positions and their replies the odd one right
    # after, reserved at once: however concurrent turns finish, each reply
    # sits next to its question. An unanswered question leaves a gap.
    return 0 if last is None else (last // 2 + 1) * 2


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
    (:data:`_QUESTION_APPEND`).
    """
    with transaction.atomic():
        if session_id is None:
            return _session_start(workspace, external_user_id, content, history, system_note)
        window = max(workspace.history_turns, 1)
        stored = _question_append(
            workspace, external_user_id, session_id, content, turns=max(window, len(history))
        )
        # A 400 here rolls the question back with everything else.
        _history_check(stored, history, system_note, history_offset)
        return replace(stored, earlier=stored.earlier[-window:] if stored.earlier else [])


def _session_start(
    workspace: Workspace,
    external_user_id: str,
    content: str,
    history: Sequence[tuple[str, str]],
    system_note: str | None,
) -> StoredQuestion:
    session = Session(
        workspace=workspace,
        external_user_id=external_user_id,
        title=session_title_from(history[0][0] if history else content),
        system_note=system_note or "",
        message_count=2 * len(history) + 1,
    )
    question = Message(session=session, sequence=2 * len(history), role=MessageRole.USER, content=content)
    earlier: list[HistoryTurn] = []
    if history:
        session.save(force_insert=True)
        earlier = _history_store(session, history)[-max(workspace.history_turns, 1) :]
        question.save(force_insert=True)
    else:
        # Both rows in one statement.
        session_columns, session_values, params = _insert_parts(session, "s")
        question_columns, question_values, question_params = _insert_parts(question, "q")
        sql = _SESSION_START.format(
            session=_table(Session),
            session_columns=session_columns,
            session_values=session_values,
            message=_table(Message),
            question_columns=question_columns,
            question_values=question_values,
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, params | question_params)
        _saved(session)
        _saved(question)
    return StoredQuestion(session, True, question, earlier=earlier)


_SESSION_START = """
WITH s AS (INSERT INTO {session} ({session_columns}) VALUES ({session_values}))
INSERT INTO {message} ({question_columns}) VALUES ({question_values})
"""


def _question_append(
    workspace: Workspace, external_user_id: str, session_id: uuid.UUID, content: str, *, turns: int
) -> StoredQuestion:
    """The question stored after the messages of the end user's session
    ``session_id``, and the last ``turns`` completed turns before it."""
    question = Message(session_id=session_id, sequence=0, role=MessageRole.USER, content=content)
    columns, values, params = _insert_parts(question, "q", leave_out="sequence")
    sql = _question_append_sql(columns, values)
    params |= {
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
        cursor.execute(sql, params)
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
        question.sequence = position
        _saved(question)
    question.session = locked
    if seen_count == locked.message_count - 1:
        earlier = history_turns_from([_history_row(r) for r in _json(earlier_rows)])
    else:
        # Another turn of this session committed while this one waited:
        # the conversation read with the question may lack its reply.
        earlier = history_turns(session_id=locked.id, before_sequence=question.sequence, turns=turns)
    return StoredQuestion(locked, False, question, earlier=earlier)


# The session row locked and the question counted (an UPDATE takes the row
# lock and, having waited for a concurrent turn, counts from its committed
# row), the question inserted at the next even position, and the last
# completed turns read back: one round trip. Every read in a statement sees
# the snapshot taken when it began, before any wait for the lock; the caller
# checks that nothing committed meanwhile (``seen_count``, the count before
# this turn's, against the locked row's) and reads again when it did. A
# position already taken by such a turn inserts nothing (ON CONFLICT).
_QUESTION_APPEND = """
WITH locked AS (
    UPDATE chat_session SET message_count = message_count + 1, updated_at = %(now)s
    WHERE id = %(session)s AND workspace_id = %(workspace)s AND external_user_id = %(user)s
    RETURNING *
),
question AS (
    INSERT INTO {message} ({columns}, sequence)
    SELECT {values}, coalesce((
        SELECT max(m.sequence) / 2 * 2 + 2 FROM {message} m WHERE m.session_id = locked.id
    ), 0)
    FROM locked
    ON CONFLICT ON CONSTRAINT message_unique_sequence DO NOTHING
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
       (SELECT s.message_count FROM chat_session s WHERE s.id = %(session)s) AS seen_count,
       (SELECT sequence FROM question) AS question_sequence,
       (SELECT coalesce(json_agg(json_build_array(content, id, response, question_content, question_id)
                                 ORDER BY sequence DESC), '[]')
        FROM earlier) AS earlier
FROM locked
"""


@functools.cache
def _question_append_sql(columns: str, values: str) -> str:
    return _QUESTION_APPEND.format(
        message=_table(Message),
        columns=columns,
        values=values,
        session_columns=", ".join(f"locked.{column}" for column in _quoted(Session)),
    )


def _insert_parts(
    instance: models.Model, prefix: str, leave_out: str = ""
) -> tuple[str, str, dict[str, Any]]:
    """The columns, placeholders (named ``prefix`` and a number, each cast to
    its column's type) and values that insert ``instance`` as Django's
    ``save()`` would, defaults and ``auto_now`` included."""
    columns: list[str] = []
    placeholders: list[str] = []
    params: dict[str, Any] = {}
    for number, field in enumerate(instance._meta.concrete_fields):
        if field.attname == leave_out:
            continue
        name = f"{prefix}{number}"
        columns.append(_column(field))
        placeholders.append(f"%({name})s::{field.cast_db_type(connection)}")
        params[name] = field.get_db_prep_save(field.pre_save(instance, add=True), connection)
    return ", ".join(columns), ", ".join(placeholders), params


def _quoted(model: type[models.Model]) -> list[str]:
    return [_column(field) for field in model._meta.concrete_fields]


def _column(field: models.Field[Any, Any]) -> str:
    return connection.ops.quote_name(field.column or field.attname)


def _table(model: type[models.Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _saved(instance: models.Model) -> None:
    """Mark ``instance`` as a stored row (it was inserted by raw SQL)."""
    instance._state.adding = False
    instance._state.db = DEFAULT_DB_ALIAS


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
