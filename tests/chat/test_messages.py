"""Conversations in the chat-messages format on the native chat API, and
provenance.messages_hash. The scripted backend stands in for the generative
model (it records the exact messages it was sent)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from chat.backends.scripted import ScriptedBackend
from chat.models import Message, Session
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db

THREE_TURNS: list[dict[str, Any]] = [
    {"role": "user", "content": "Hi, I'd like to file an inpatient claim"},
    {"role": "assistant", "content": "Sure, could you give me the policy number?"},
    {"role": "user", "content": "It is 3201456789012345"},
    {"role": "assistant", "content": "Thanks. And the policyholder's name?"},
    {"role": "user", "content": [{"type": "text", "text": "Andi"}, {"type": "text", "text": "Pratama"}]},
]


def chat(tenant: Tenant, scope: str = "admin", path: str = "chat/", **body: Any) -> Any:
    body.setdefault("external_user_id", "u1")
    return tenant.client(scope).post(f"/api/v1/workspaces/{tenant.workspace.id}/{path}", body, format="json")


def canonical_hash(messages: list[dict[str, str]]) -> str:
    text = json.dumps(messages, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_three_turns_without_a_session_become_its_stored_history(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    response = chat(owner, messages=THREE_TURNS, include_prompt_trace=True)
    assert response.status_code == 200, response.json()
    data = response.json()["data"]
    assert data["session"]["created"] is True
    assert data["session"]["title"] == "Hi, I'd like to file an inpatient claim"
    assert data["user_message"]["content"] == "Andi\nPratama"  # text parts joined with newlines
    session = Session.objects.get(id=data["session"]["id"])
    stored = list(session.messages.order_by("sequence").values_list("role", "content", "model"))
    assert stored == [
        ("user", "Hi, I'd like to file an inpatient claim", ""),
        ("assistant", "Sure, could you give me the policy number?", "client"),
        ("user", "It is 3201456789012345", ""),
        ("assistant", "Thanks. And the policyholder's name?", "client"),
        ("user", "Andi\nPratama", ""),
        ("assistant", "Scripted answer.", "smollm2-135m-instruct"),
    ]
    assert session.message_count == 6
    # The model saw the two earlier turns as history, then the question.
    trace = data["prompt_trace"]["messages"]
    assert [m["role"] for m in trace] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert trace[1]["content"] == THREE_TURNS[0]["content"]
    assert scripted.calls[-1]["messages"] == trace
    # provenance.messages_hash: SHA-256 of the canonical JSON of exactly those messages.
    provenance = data["assistant_message"]["provenance"]
    assert provenance == {"messages_hash": canonical_hash(trace)}
    assert Message.objects.get(id=data["assistant_message"]["id"]).provenance == provenance
    # The next turn continues it with a plain message.
    again = chat(owner, message="Done?", session_id=str(session.id), include_prompt_trace=True).json()["data"]
    contents = [m["content"] for m in again["prompt_trace"]["messages"][1:-1]]
    assert contents[:4] == [m["content"] for m in THREE_TURNS[:4]]
    assert contents[4:] == ["Andi\nPratama", "Scripted answer."]


def test_history_sent_with_a_session_must_match_the_stored_one(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    session_id = chat(owner, messages=THREE_TURNS).json()["data"]["session"]["id"]
    continued = [
        {"role": "user", "content": "Andi\nPratama"},
        {"role": "assistant", "content": "Scripted answer."},
        {"role": "user", "content": "What next?"},
    ]
    ok = chat(owner, messages=continued, session_id=session_id)
    assert ok.status_code == 200, ok.json()
    before = Message.objects.count()
    contradicting = [
        {"role": "user", "content": "What next?"},
        {"role": "assistant", "content": "Something the server never said."},
        {"role": "user", "content": "And then?"},
    ]
    response = chat(owner, messages=contradicting, session_id=session_id)
    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == {"messages[1].content"}
    assert Message.objects.count() == before  # nothing stored


def test_a_system_message_is_an_integrator_note_below_the_workspace_instructions(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    owner.workspace.system_prompt = "You answer questions about claims."
    owner.workspace.save()
    messages = [{"role": "system", "content": "The user is a premium member."}, *THREE_TURNS[:1]]
    data = chat(owner, messages=messages, include_prompt_trace=True).json()["data"]
    system = data["prompt_trace"]["messages"][0]["content"]
    assert system.startswith("You answer questions about claims.")
    assert system.index("You answer questions") < system.index("The user is a premium member.")
    session = Session.objects.get(id=data["session"]["id"])
    assert session.system_note == "The user is a premium member."
    # It stays with the session; sending another one contradicts it.
    later = chat(owner, message="More?", session_id=str(session.id), include_prompt_trace=True).json()["data"]
    assert "The user is a premium member." in later["prompt_trace"]["messages"][0]["content"]
    clash = [{"role": "system", "content": "The user is an admin."}, {"role": "user", "content": "Hm?"}]
    response = chat(owner, messages=clash, session_id=str(session.id))
    assert response.status_code == 400 and "messages[0].content" in response.json()["error"]["fields"]


@pytest.mark.parametrize(
    ("messages", "field"),
    [
        ([], "messages"),
        ("hello", "messages"),
        ([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}], "messages[1].role"),
        ([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}], "messages[1].role"),
        ([{"role": "assistant", "content": "a"}, {"role": "user", "content": "b"}], "messages[0].role"),
        ([{"role": "user", "content": "a"}, {"role": "system", "content": "b"}], "messages[1].role"),
        ([{"role": "tool", "content": "a"}], "messages[0].role"),
        (
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "What is this?"},
                        {"type": "image_url", "image_url": {"url": "http://x/y.png"}},
                    ],
                }
            ],
            "messages[0].content[1].type",
        ),
        ([{"role": "user", "content": "   "}], "messages[0].content"),
        ([{"role": "user", "content": None}], "messages[0].content"),
        ([{"role": "user", "content": "x" * 32_001}], "messages[0].content"),
        (["not an object"], "messages[0]"),
    ],
)
def test_bad_messages_are_400_naming_the_place(
    owner: Tenant, scripted: ScriptedBackend, messages: Any, field: str
) -> None:
    response = chat(owner, messages=messages)
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert field in error["fields"], error["fields"]
    assert not Session.objects.exists()


def test_exactly_one_of_message_and_messages(owner: Tenant, scripted: ScriptedBackend) -> None:
    both = chat(owner, message="hi", messages=[{"role": "user", "content": "hi"}])
    neither = chat(owner)
    for response in (both, neither):
        assert response.status_code == 400
        assert {"message", "messages"} <= set(response.json()["error"]["fields"])


@pytest.mark.django_db(transaction=True)
def test_the_stream_takes_messages_too(owner: Tenant, scripted: ScriptedBackend) -> None:
    from tests.chat.helpers import sse_events, stream_of

    events = list(sse_events(stream_of(chat(owner, "chat", "chat/stream/", messages=THREE_TURNS))))
    assert events[0][0] == "session" and events[-1][0] == "message"
    assert events[-1][1]["provenance"]["messages_hash"]
    assert Message.objects.filter(session_id=events[0][1]["id"]).count() == 6
