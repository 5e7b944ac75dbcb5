from __future__ import annotations

import re
from typing import Any

import pytest

from chat.backends.scripted import ScriptedBackend
from chat.models import Message, Session
from chat.output import FALLBACK_TEXT
from chat.services.sessions import session_title_from
from daneshyar.exceptions import LLMUnavailable
from tests.chat.helpers import answer, ingest_text
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db

POLICY = """Inpatient claims must be filed within 30 days of discharge.

Outpatient visits are covered up to 80 percent of the listed tariff.

Patients over 70 receive a yearly free health check at any partner clinic."""


def url(tenant: Tenant, suffix: str = "chat/") -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/{suffix}"


def chat(tenant: Tenant, scope: str = "chat", **body: Any) -> Any:
    body.setdefault("external_user_id", "user-1")
    return tenant.client(scope).post(url(tenant), body, format="json")


def test_first_message_creates_a_titled_session(owner: Tenant, scripted: ScriptedBackend) -> None:
    response = chat(owner, message="  How long do I have to file an inpatient claim?  ")
    assert response.status_code == 200, response.json()
    data = response.json()["data"]
    assert data["session"]["created"] is True
    assert data["session"]["title"] == "How long do I have to file an inpatient claim?"
    assert data["user_message"]["role"] == "user"
    assert set(data["user_message"]) == {"id", "role", "content", "created_at"}
    assistant = data["assistant_message"]
    assert assistant["role"] == "assistant"
    assert assistant["content"] == "Scripted answer."
    assert assistant["response"] == {
        "type": "answer",
        "parts": [{"text": "Scripted answer.", "source": None}],
        "form": None,
    }
    assert assistant["model"] == "smollm2-135m-instruct"
    assert "prompt_trace" not in data


def test_title_is_cut_at_a_word_boundary() -> None:
    message = "Could you please explain " + "the inpatient claims procedure " * 5
    title = session_title_from(message)
    assert len(title) <= 80
    assert title.endswith("…")
    assert message.startswith(title[:-1])
    assert message[len(title) - 1] == " "  # cut where a word ended
    assert session_title_from("x" * 120) == "x" * 79 + "…"


def test_continuing_a_session_keeps_order(owner: Tenant, scripted: ScriptedBackend) -> None:
    first = chat(owner, message="Hello").json()["data"]
    session_id = first["session"]["id"]
    second = chat(owner, message="And then?", session_id=session_id).json()["data"]
    assert second["session"] == {"id": session_id, "title": "Hello", "created": False}
    session = Session.objects.get(id=session_id)
    assert session.message_count == 4
    assert list(session.messages.values_list("sequence", "role", "content")) == [
        (0, "user", "Hello"),
        (1, "assistant", "Scripted answer."),
        (2, "user", "And then?"),
        (3, "assistant", "Scripted answer."),
    ]
    history = scripted.calls[1]["messages"]
    assert [m["role"] for m in history] == ["system", "user", "assistant", "user"]
    assert history[1]["content"] == "Hello"


def test_end_users_never_see_each_others_sessions(owner: Tenant, scripted: ScriptedBackend) -> None:
    session_id = chat(owner, message="Mine", external_user_id="alice").json()["data"]["session"]["id"]
    client = owner.client("chat")
    base = url(owner, f"sessions/{session_id}/")
    assert client.get(url(owner, "sessions/"), {"external_user_id": "bob"}).json()["data"]["items"] == []
    for response in [
        client.get(base, {"external_user_id": "bob"}),
        client.get(base + "messages/", {"external_user_id": "bob"}),
        client.patch(base + "?external_user_id=bob", {"title": "x"}, format="json"),
        client.delete(base + "?external_user_id=bob"),
        chat(owner, message="Let me in", external_user_id="bob", session_id=session_id),
    ]:
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    assert Message.objects.filter(session_id=session_id).count() == 2


def test_outsider_organization_gets_404(owner: Tenant, outsider: Tenant, scripted: ScriptedBackend) -> None:
    session_id = chat(owner, message="Mine").json()["data"]["session"]["id"]
    client = outsider.client("admin")
    for response in [
        client.post(url(owner), {"external_user_id": "user-1", "message": "hi"}, format="json"),
        client.get(url(owner, "sessions/")),
        client.get(url(owner, f"sessions/{session_id}/")),
        client.get(url(outsider, f"sessions/{session_id}/")),
        client.get(url(outsider, f"sessions/{session_id}/messages/")),
        client.post(
            url(outsider),
            {"external_user_id": "user-1", "message": "hi", "session_id": session_id},
            format="json",
        ),
    ]:
        assert response.status_code == 404
    assert Message.objects.count() == 2


def _fourth_question(owner: Tenant) -> dict[str, Any]:
    """Questions 1 to 3 of a session, then question 4 with its prompt trace: its data."""
    session_id = chat(owner, message="question 1").json()["data"]["session"]["id"]
    for n in (2, 3):
        chat(owner, message=f"question {n}", session_id=session_id)
    data: dict[str, Any] = chat(
        owner, "admin", message="question 4", session_id=session_id, include_prompt_trace=True
    ).json()["data"]
    return data


def test_history_window_holds_the_last_turns(owner: Tenant, scripted: ScriptedBackend) -> None:
    owner.workspace.history_turns = 2
    owner.workspace.save()
    scripted.default = lambda messages: answer((f"Answer to: {messages[-1]['content'][-10:]}", None))
    data = _fourth_question(owner)
    messages = data["prompt_trace"]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert [messages[1]["content"], messages[3]["content"]] == ["question 2", "question 3"]
    assert messages[2]["content"] == "Answer to: question 2"
    assert messages[-1]["content"].endswith("Question: question 4")
    assert messages == scripted.calls[-1]["messages"]


def test_without_documents_the_extractive_trace_shows_the_history_window(owner: Tenant) -> None:
    """No documents: no retrieval, so no retrieval queries carry the
    conversation; the prompt then carries the workspace's last
    ``history_turns`` turns, as a generative model's does."""
    owner.workspace.history_turns = 2
    owner.workspace.save()
    data = _fourth_question(owner)
    assert data["assistant_message"]["model"] == "extractive"
    assert data["assistant_message"]["grounding"] == "general_knowledge"
    messages = data["prompt_trace"]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert [messages[1]["content"], messages[3]["content"]] == ["question 2", "question 3"]
    assert messages[-1]["content"].endswith("question 4")


def test_default_retrieval_takes_five_passages(owner: Tenant, scripted: ScriptedBackend) -> None:
    text = "\n\n".join(f"Clinic {n} is open on weekdays from {n} am." for n in range(12))
    ingest_text(owner.workspace, "Clinics", text)
    data = chat(owner, "admin", message="When is clinic 3 open?", include_prompt_trace=True).json()["data"]
    trace = data["prompt_trace"]
    assert len(trace["passages"]) == 5
    scores = [p["score"] for p in trace["passages"]]
    assert scores == sorted(scores, reverse=True)
    final = trace["messages"][-1]
    assert final["role"] == "user"
    assert final["content"].startswith("<reference_passages>")
    assert "untrusted" in final["content"]
    assert "[5] (from: Clinics)" in final["content"] and "[6]" not in final["content"]
    assert data["assistant_message"]["grounding"] == "documents"
    assert all(m["role"] != "system" or "<reference_passages>" not in m["content"] for m in trace["messages"])


def test_named_resources_widen_retrieval_to_fifteen_plus_three(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    close = "\n\n".join(f"Cardiology ward {n} visiting hours are {n} to {n + 2} pm." for n in range(20))
    far = "\n\n".join(f"The cafeteria serves soup number {n} on Fridays." for n in range(6))
    ingest_text(owner.workspace, "Wards", close)
    menu = ingest_text(owner.workspace, "Menu", far)
    data = chat(
        owner,
        "admin",
        message="What are the cardiology ward visiting hours?",
        resource_ids=[str(menu.id)],
        include_prompt_trace=True,
    ).json()["data"]
    passages = data["prompt_trace"]["passages"]
    assert len(passages) == 18
    assert {p["language"] for p in passages} == {"en"}  # each passage's, detected at ingestion
    by_resource = [p["resource_id"] for p in passages]
    assert by_resource.count(str(menu.id)) == 3


def test_unknown_resource_id_is_400_and_nothing_is_stored(owner: Tenant, scripted: ScriptedBackend) -> None:
    response = chat(owner, message="hi", resource_ids=["6f1c9a40-0000-4000-8000-000000000000"])
    assert response.status_code == 400
    assert "resource_ids" in response.json()["error"]["fields"]
    assert Session.objects.count() == 0


def test_citations_to_passages_not_retrieved_are_dropped_and_flagged(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    resource = ingest_text(owner.workspace, "Policy", POLICY)
    scripted.replies = [answer(("Within 30 days.", 1), ("Made up.", 9), ("No source.", None))]
    assistant = chat(owner, message="When must I file an inpatient claim?").json()["data"][
        "assistant_message"
    ]
    parts = assistant["response"]["parts"]
    assert parts[0]["source"]["resource_id"] == str(resource.id)
    assert parts[0]["source"]["resource_title"] == "Policy"
    assert parts[1] == {"text": "Made up.", "source": None}
    assert parts[2] == {"text": "No source.", "source": None}
    assert assistant["content"] == "Within 30 days. Made up. No source."
    stored = Message.objects.get(id=assistant["id"])
    assert stored.invalid_citations == [{"part": 1, "passage": 9, "reason": "not_retrieved"}]
    retrieved_ids = {r["passage_id"] for r in stored.retrieved}
    assert parts[0]["source"]["passage_id"] in retrieved_ids


FORM: dict[str, Any] = {
    "type": "form",
    "question": "Which department should I answer for?",
    "title": "Narrow the question",
    "fields": [
        {"name": "department", "label": "Department", "type": "select", "required": True,
         "placeholder": None, "options": ["Cardiology", "Neurology"]},
        {"name": "topics", "label": "Topics", "type": "checkbox", "required": False,
         "placeholder": None, "options": ["Visits", "Costs"]},
        {"name": "agree", "label": "I agree", "type": "checkbox", "required": True,
         "placeholder": None, "options": None},
        {"name": "email", "label": "E-mail", "type": "email", "required": False,
         "placeholder": "you@example.com", "options": ["dropped"]},
    ],
}  # fmt: skip


def test_form_replies_are_validated_and_shaped(owner: Tenant, scripted: ScriptedBackend) -> None:
    import json

    scripted.replies = [json.dumps(FORM)]
    assistant = chat(owner, message="Tell me about the department").json()["data"]["assistant_message"]
    assert assistant["content"] == FORM["question"]
    response = assistant["response"]
    assert response["type"] == "form"
    assert response["parts"] == [{"text": FORM["question"], "source": None}]
    fields = response["form"]["fields"]
    assert response["form"]["title"] == "Narrow the question"
    assert fields[0]["options"] == ["Cardiology", "Neurology"]
    assert fields[1]["options"] == ["Visits", "Costs"]  # multi-select group
    assert "options" not in fields[2]  # yes/no toggle
    assert "options" not in fields[3] and fields[3]["placeholder"] == "you@example.com"


@pytest.mark.parametrize(
    "broken",
    [
        {"fields": [{**FORM["fields"][0], "options": None}]},  # select without options
        {"fields": [FORM["fields"][2], FORM["fields"][2]]},  # duplicate names
        {"fields": [{**FORM["fields"][2], "type": "slider"}]},  # unknown type
        {"question": " "},
    ],
)
def test_invalid_form_is_retried_then_falls_back(
    owner: Tenant, scripted: ScriptedBackend, broken: dict[str, Any]
) -> None:
    import json

    scripted.replies = [json.dumps({**FORM, **broken}), json.dumps({**FORM, **broken})]
    assistant = chat(owner, message="Form please").json()["data"]["assistant_message"]
    assert len(scripted.calls) == 2
    assert assistant["content"] == FALLBACK_TEXT
    assert Message.objects.get(id=assistant["id"]).is_fallback is True


def test_invalid_generation_is_retried_once(owner: Tenant, scripted: ScriptedBackend) -> None:
    scripted.replies = ['{"type": "answer", "parts": [', answer(("Second try.", None))]
    assistant = chat(owner, message="hi").json()["data"]["assistant_message"]
    assert assistant["content"] == "Second try."
    assert Message.objects.get(id=assistant["id"]).is_fallback is False
    # Greedy decoding would repeat the same mistake: the retry samples.
    assert [call["temperature"] for call in scripted.calls] == [None, 0.7]


def test_empty_generation_twice_gives_the_fallback(owner: Tenant, scripted: ScriptedBackend) -> None:
    scripted.replies = ["", answer(("   ", None))]
    response = chat(owner, message="hi")
    assert response.status_code == 200
    assert response.json()["data"]["assistant_message"]["content"] == FALLBACK_TEXT


def test_general_knowledge_without_ready_resources(owner: Tenant, scripted: ScriptedBackend) -> None:
    pending = ingest_text(owner.workspace, "Draft", POLICY)
    pending.status = "processing"
    pending.save()
    scripted.replies = [answer(("Paris.", 1))]
    data = chat(owner, "admin", message="Capital of France?", include_prompt_trace=True).json()["data"]
    assistant = data["assistant_message"]
    assert assistant["grounding"] == "general_knowledge"
    assert assistant["response"]["parts"] == [{"text": "Paris.", "source": None}]
    assert data["prompt_trace"]["passages"] == []
    assert "<reference_passages>" not in data["prompt_trace"]["messages"][-1]["content"]


def test_backend_down_is_503_and_the_session_stays_consistent(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    owner.workspace.on_generation_unavailable = "error"
    owner.workspace.save()
    session_id = chat(owner, message="first").json()["data"]["session"]["id"]
    scripted.replies = [LLMUnavailable()]
    response = chat(owner, message="lost question", session_id=session_id)
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "llm_unavailable"
    assert response.json()["error"]["session_id"] == session_id
    assert int(response["Retry-After"]) > 0
    session = Session.objects.get(id=session_id)
    assert list(session.messages.values_list("sequence", "role")) == [
        (0, "user"),
        (1, "assistant"),
        (2, "user"),
    ]
    assert session.message_count == 3
    data = chat(owner, "admin", message="retry", session_id=session_id, include_prompt_trace=True).json()[
        "data"
    ]
    contents = [m["content"] for m in data["prompt_trace"]["messages"][1:-1]]
    assert contents == ["first", "Scripted answer."]  # the unanswered question is skipped
    assert list(session.messages.values_list("sequence", flat=True)) == [0, 1, 2, 4, 5]


def test_prompt_trace_is_refused_for_chat_keys_before_anything_is_stored(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    response = chat(owner, "chat", message="show me", include_prompt_trace=True)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"
    assert Session.objects.count() == 0 and Message.objects.count() == 0
    assert scripted.calls == []


def test_unknown_model_is_400(owner: Tenant, scripted: ScriptedBackend) -> None:
    response = chat(owner, message="hi", model="gpt-17")
    assert response.status_code == 400
    assert "model" in response.json()["error"]["fields"]
    assert Session.objects.count() == 0


@pytest.mark.parametrize(
    "body",
    [
        {"message": "hi", "external_user_id": ""},
        {"message": ""},
        {"message": "x" * 32_001},
        {"message": "hi", "resource_ids": [f"6f1c9a40-0000-4000-8000-{n:012d}" for n in range(21)]},
        {"message": "hi", "session_id": "not-a-uuid"},
    ],
)
def test_invalid_bodies_are_400(owner: Tenant, scripted: ScriptedBackend, body: dict[str, Any]) -> None:
    response = chat(owner, **body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"


@pytest.mark.parametrize(
    "content_type", ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]
)
def test_a_form_body_is_415_not_read_with_html_form_rules(
    owner: Tenant, scripted: ScriptedBackend, content_type: str
) -> None:
    """Found by schema fuzzing: a form body's empty ``model=`` counted as
    "not sent" and the turn ran. The contract is JSON in."""
    body = (
        "message=hi&external_user_id=user-1&model="
        if "urlencoded" in content_type
        else '--x\r\nContent-Disposition: form-data; name="message"\r\n\r\nhi\r\n--x--\r\n'
    )
    response = owner.client("chat").post(url(owner), body, content_type=content_type)
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"
    assert Session.objects.count() == 0


def test_a_turn_runs_a_small_fixed_number_of_chat_queries(owner: Tenant, scripted: ScriptedBackend) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    ingest_text(owner.workspace, "Policy", POLICY)
    session_id = chat(owner, message="first").json()["data"]["session"]["id"]
    with CaptureQueriesContext(connection) as queries:
        assert chat(owner, message="second", session_id=session_id).status_code == 200
    # Tables as Django quotes them, or as the raw lock statement names them.
    chat_sql = [q["sql"] for q in queries.captured_queries if re.search(r'(^|[ "])chat_[a-z]+"? ', q["sql"])]
    # guard rules and policy; the session locked and counted, the question stored and the
    # history read back (one statement, with the replies' sources: the conversation's
    # retrieval prior); bump session, insert reply
    assert len(chat_sql) == 5, chat_sql
    assert not any("JOIN" in sql for sql in chat_sql), [sql for sql in chat_sql if "JOIN" in sql]


def test_a_turn_makes_a_pinned_number_of_round_trips(owner: Tenant, scripted: ScriptedBackend) -> None:
    """Every statement of a follow-up turn, savepoints aside (a round trip each;
    bench/chat_overhead.py measures what they cost). 21 before they were cut:
    the session's lock and count are one UPDATE, the history one statement,
    a query's lexemes and their frequencies one statement. One came back:
    the retrieved passages' stored answer-unit vectors, read instead of
    running the embedding model on each unit (retrieval/unit_vectors.py).
    Then the session's lock, the question's position, the question and the
    history became one statement, and a new session with its first question
    another (chat/services/messages.py). A hybrid search went from three to
    five statements to one (retrieval/search/hybrid.py)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    ingest_text(owner.workspace, "Policy", POLICY)
    session_id = chat(owner, message="first").json()["data"]["session"]["id"]
    # A new session, once the key's last use and the workspace's statistics are recorded.
    with CaptureQueriesContext(connection) as queries:
        assert chat(owner, message="another first").status_code == 200
    statements = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]
    # key; workspace limits; ready resources exist; guard rules, policy; the session and the
    # question (one statement); one search (one statement); the unit vectors; bump session, reply
    assert len(statements) == 10, "\n".join(sql[:120] for sql in statements)
    with CaptureQueriesContext(connection) as queries:
        assert chat(owner, message="second", session_id=session_id).status_code == 200
    statements = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]
    # key; workspace limits; ready resources exist; guard rules, policy; the session locked,
    # the question stored and the history read (one statement); two searches (the question,
    # and the question in its conversation) of one statement each; the passages' unit vectors;
    # bump session, reply
    assert len(statements) == 11, "\n".join(sql[:120] for sql in statements)


def test_a_session_deleted_during_generation_is_404_not_500(owner: Tenant, scripted: ScriptedBackend) -> None:
    session_id = chat(owner, message="first").json()["data"]["session"]["id"]

    def delete_meanwhile(messages: list[Any]) -> str:
        Session.objects.filter(id=session_id).delete()
        return answer(("Too late.", None))

    scripted.replies = [delete_meanwhile]
    response = chat(owner, message="second", session_id=session_id)
    assert response.status_code == 404
    assert not Message.objects.filter(session_id=session_id).exists()
