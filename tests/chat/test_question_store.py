"""Storing a question: one statement locks the session, stores the question at
the next position and reads the conversation back. Its reads see the
database as it was when the statement began; these tests make a turn wait
for another turn's lock and check that what committed meanwhile is not
missed (real PostgreSQL, two connections)."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from django.db import connection, transaction

from chat.models import Message, Session
from chat.services.messages import StoredQuestion
from chat.services.questions import question_store
from daneshyar.exceptions import NotFound
from tests.chat.helpers import answer_store
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db(transaction=True)


def reply(stored: StoredQuestion, text: str) -> Message:
    return answer_store(stored, text)


def ask(tenant: Tenant, session_id: uuid.UUID | None, content: str) -> StoredQuestion:
    return question_store(
        workspace=tenant.workspace, external_user_id="u1", session_id=session_id, content=content
    )


def test_a_question_returns_the_conversation_before_it(owner: Tenant) -> None:
    first = ask(owner, None, "q0")
    assert (first.message.sequence, first.earlier, first.session.message_count) == (0, [], 1)
    reply(first, "a0")
    second = ask(owner, first.session.id, "q1")
    reply(second, "a1")
    third = ask(owner, first.session.id, "q2")
    assert third.message.sequence == 4
    assert [(t.question, t.answer) for t in third.earlier or []] == [("q0", "a0"), ("q1", "a1")]
    assert third.session.message_count == 5
    stored = Message.objects.get(id=third.message.id)
    assert (stored.sequence, stored.role, stored.content) == (4, "user", "q2")
    assert stored.created_at == third.message.created_at


def test_an_unanswered_question_leaves_a_gap_and_no_turn(owner: Tenant) -> None:
    first = ask(owner, None, "q0")
    ask(owner, first.session.id, "never answered")
    third = ask(owner, first.session.id, "q2")
    assert third.message.sequence == 4
    assert third.earlier == []


def test_another_users_session_is_404_and_nothing_is_stored(owner: Tenant) -> None:
    first = ask(owner, None, "q0")
    with pytest.raises(NotFound):
        question_store(
            workspace=owner.workspace, external_user_id="u2", session_id=first.session.id, content="x"
        )
    assert Message.objects.filter(session_id=first.session.id).count() == 1
    assert Session.objects.get(id=first.session.id).message_count == 1


def test_a_question_that_waited_for_another_turn_sees_what_it_committed(owner: Tenant) -> None:
    """Turn A holds the session's lock while it stores its question and its
    reply; turn B's statement starts meanwhile and waits. B's reads are from
    before the wait: its computed position is A's, and its history lacks A's
    turn. B must still take the next free position and see A's turn."""
    first = ask(owner, None, "q0")
    reply(first, "a0")
    session_id = first.session.id
    holding = threading.Event()
    errors: list[BaseException] = []

    def turn_a() -> None:
        try:
            with transaction.atomic():
                stored = ask(owner, session_id, "qa")
                holding.set()
                time.sleep(0.6)  # turn B starts its statement and waits for the lock
                reply(stored, "ra")
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=turn_a)
    thread.start()
    assert holding.wait(10)
    started = time.monotonic()
    b = ask(owner, session_id, "qb")
    waited = time.monotonic() - started
    thread.join()
    assert not errors
    assert waited > 0.3, "turn B did not wait for turn A's lock"
    assert b.message.sequence == 4
    assert [(t.question, t.answer) for t in b.earlier or []] == [("q0", "a0"), ("qa", "ra")]
    rows = list(Message.objects.filter(session_id=session_id).values_list("sequence", "content"))
    assert rows == [(0, "q0"), (1, "a0"), (2, "qa"), (3, "ra"), (4, "qb")]
    assert Session.objects.get(id=session_id).message_count == 5
