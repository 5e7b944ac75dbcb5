from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.db import connection

from chat.backends.scripted import ScriptedBackend
from chat.models import Message, Session
from daneshyar.exceptions import LLMUnavailable
from tests.chat.helpers import answer, ingest_text, sse_events, stream_of
from tests.conftest import Tenant


def stream(tenant: Tenant, scope: str = "chat", **body: Any) -> Any:
    body.setdefault("external_user_id", "user-1")
    return tenant.client(scope).post(
        f"/api/v1/workspaces/{tenant.workspace.id}/chat/stream/", body, format="json"
    )


def wait_for(predicate: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


# The worker thread stores the reply on its own connection: these tests need
# committed data (transaction=True), not the per-test transaction.
pytestmark = pytest.mark.django_db(transaction=True)


def test_stream_events_in_order(owner: Tenant, scripted: ScriptedBackend) -> None:
    ingest_text(owner.workspace, "Policy", "Claims are filed within 30 days.\n\nVisits cost 10 euros.")
    scripted.replies = [answer(('Claims are filed within "30" days.', 1), ("Visits cost 10 euros.", 2))]
    response = stream(owner, message="When are claims filed?")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream; charset=utf-8"
    events = list(sse_events(stream_of(response)))
    names = [name for name, _ in events]
    assert names[0] == "session" and names[-1] == "message"
    assert set(names[1:-1]) == {"delta"} and len(names) > 4
    session = events[0][1]
    assert session["created"] is True and session["title"] == "When are claims filed?"
    text = "".join(data["text"] for name, data in events if name == "delta")
    final = events[-1][1]
    assert text == final["content"] == 'Claims are filed within "30" days. Visits cost 10 euros.'
    assert final["role"] == "assistant" and final["grounding"] == "documents"
    assert final["response"]["parts"][0]["source"]["resource_title"] == "Policy"
    stored = Message.objects.get(id=final["id"])
    assert stored.content == final["content"] and stored.sequence == 1


def test_turn_is_stored_when_the_client_disconnects(owner: Tenant, scripted: ScriptedBackend) -> None:
    scripted.replies = [answer(("A long answer that keeps streaming for a while.", None))]
    scripted.chunk_size = 3
    scripted.gate.clear()  # the backend stops after its first chunk until released
    response = stream(owner, message="Tell me everything")
    chunks = stream_of(response)
    first = next(chunks)
    assert first.startswith(b"event: session")
    session_id = json.loads(first.decode().split("data: ", 1)[1])["id"]
    response.close()  # the client goes away mid-stream
    scripted.gate.set()
    wait_for(lambda: Message.objects.filter(session_id=session_id, role="assistant").exists())
    reply = Message.objects.get(session_id=session_id, role="assistant")
    assert reply.content == "A long answer that keeps streaming for a while."
    assert Session.objects.get(id=session_id).message_count == 2


def test_backend_failure_is_an_error_event(owner: Tenant, scripted: ScriptedBackend) -> None:
    owner.workspace.on_generation_unavailable = "error"
    owner.workspace.save()
    scripted.replies = [LLMUnavailable()]
    events = list(sse_events(stream_of(stream(owner, message="hi"))))
    assert [name for name, _ in events] == ["session", "error"]
    assert events[1][1]["code"] == "llm_unavailable"
    assert events[1][1]["session_id"] == events[0][1]["id"]
    assert list(Message.objects.values_list("role", flat=True)) == ["user"]


def test_stream_refuses_prompt_trace_for_chat_keys_before_opening(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    response = stream(owner, message="hi", include_prompt_trace=True)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"
    assert Session.objects.count() == 0


def test_admin_stream_carries_the_prompt_trace(owner: Tenant, scripted: ScriptedBackend) -> None:
    events = list(sse_events(stream_of(stream(owner, "admin", message="hi", include_prompt_trace=True))))
    assert [name for name, _ in events][:2] == ["session", "prompt_trace"]
    assert events[1][1]["messages"][0]["role"] == "system"


def test_concurrent_posts_to_one_session_keep_turns_together(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    def echo(messages: list[Any]) -> str:
        time.sleep(0.05)
        return answer((f"re: {messages[-1]['content'].rsplit('Question: ', 1)[1]}", None))

    scripted.default = echo
    client = owner.client("chat")
    base = f"/api/v1/workspaces/{owner.workspace.id}/chat/"
    first = client.post(base, {"external_user_id": "u", "message": "q0"}, format="json")
    session_id = first.json()["data"]["session"]["id"]

    def post(n: int) -> int:
        try:
            body = {"external_user_id": "u", "message": f"q{n}", "session_id": session_id}
            return int(owner.client("chat").post(base, body, format="json").status_code)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=6) as pool:
        codes = list(pool.map(post, range(1, 9)))
    assert codes == [200] * 8
    rows = list(Message.objects.filter(session_id=session_id).values_list("sequence", "role", "content"))
    assert [seq for seq, _, _ in rows] == list(range(18))
    for index in range(0, 18, 2):
        (_, user_role, question), (_, reply_role, reply) = rows[index], rows[index + 1]
        assert (user_role, reply_role) == ("user", "assistant")
        assert reply == f"re: {question}"
    assert Session.objects.get(id=session_id).message_count == 18


def test_a_turn_without_a_model_call_keeps_its_database_connection(owner: Tenant) -> None:
    """The extractive engine (the default) and a reply decided before
    generation take milliseconds: giving the connection back for them would
    only cost a reconnection (3.5 ms, bench/chat_overhead.py)."""
    ingest_text(owner.workspace, "Policy", "Refunds are paid within 30 days of the claim.")
    client = owner.client("chat")
    connection.ensure_connection()
    before = connection.connection
    for message in (
        "How fast are refunds paid?",
        "What colour is the moon?",
    ):  # answered; the documents don't say
        response = client.post(
            f"/api/v1/workspaces/{owner.workspace.id}/chat/",
            {"external_user_id": "u", "message": message},
            format="json",
        )
        assert response.status_code == 200
    assert connection.connection is before


def test_no_database_connection_is_held_while_the_model_runs(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    seen: list[bool] = []

    def check(messages: list[Any]) -> str:
        seen.append(connection.connection is None)  # this thread's connection is closed
        return answer(("ok", None))

    scripted.default = check
    client = owner.client("chat")
    assert (
        client.post(
            f"/api/v1/workspaces/{owner.workspace.id}/chat/",
            {"external_user_id": "u", "message": "hi"},
            format="json",
        ).status_code
        == 200
    )
    events = list(sse_events(stream_of(stream(owner, message="hi again"))))
    assert events[-1][0] == "message"
    assert seen == [True, True]
