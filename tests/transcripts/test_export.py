from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from chat.models import Session
from chat.transcripts import export as transcripts
from tests.conftest import Tenant
from tests.factories import WorkspaceFactory
from tests.responses import streamed
from tests.transcripts.conftest import export
from tests.transcripts.factories import answer_response, conversation, feedback

pytestmark = pytest.mark.django_db

SOURCE = {
    "resource_id": "0b6f5f7e-1d1e-4a53-9f4e-0e8e3c1b2a10",
    "resource_title": "Policy",
    "passage_id": "p1",
}


def test_export_holds_exactly_the_workspaces_sessions(owner: Tenant, outsider: Tenant) -> None:
    mine = [conversation(owner.workspace, external_user_id=f"u{i}")[0] for i in range(3)]
    sibling = WorkspaceFactory.create(organization=owner.organization)
    conversation(sibling, external_user_id="u0")
    conversation(outsider.workspace, external_user_id="u0")

    response, lines = export(owner.client(), owner.workspace.id)

    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/x-ndjson")
    assert {line["session_id"] for line in lines} == {str(s.id) for s in mine}
    assert all(line["type"] == "session" for line in lines)


def test_session_line_has_the_contract_shape_and_messages_oldest_first(owner: Tenant) -> None:
    _, messages = conversation(
        owner.workspace,
        turns=[
            ("first?", answer_response(("One.", SOURCE))),
            ("second?", answer_response(("Two.", None))),
        ],
    )
    feedback(messages[1], rating="down", comment="too short")

    _, [line] = export(owner.client(), owner.workspace.id)

    assert set(line) == {
        "type",
        "session_id",
        "external_user_id",
        "title",
        "created_at",
        "updated_at",
        "messages",
    }
    assert line["external_user_id"] == "alice"
    assert [m["id"] for m in line["messages"]] == [str(m.id) for m in messages]
    assert [m["role"] for m in line["messages"]] == ["user", "assistant", "user", "assistant"]
    assert [m["content"] for m in line["messages"]] == ["first?", "One.", "second?", "Two."]
    assert line["messages"][1]["response"]["parts"][0]["source"] == SOURCE
    assert line["messages"][0]["response"] is None
    assert line["messages"][1]["feedback"] == [
        {
            "external_user_id": "alice",
            "rating": "down",
            "comment": "too short",
            "created_at": line["messages"][1]["feedback"][0]["created_at"],
            "updated_at": line["messages"][1]["feedback"][0]["updated_at"],
        }
    ]
    assert line["messages"][3]["feedback"] == []
    assert line["updated_at"].endswith("Z")


def test_order_is_stable_oldest_activity_first(owner: Tenant) -> None:
    now = timezone.now()
    same = now - dt.timedelta(hours=1)
    sessions = [
        conversation(owner.workspace, external_user_id=f"u{i}", updated_at=when)[0]
        for i, when in enumerate([now, same, same, now - dt.timedelta(days=2)])
    ]
    expected = sorted(sessions, key=lambda s: (s.updated_at, s.id))

    first = [line["session_id"] for line in export(owner.client(), owner.workspace.id)[1]]
    second = [line["session_id"] for line in export(owner.client(), owner.workspace.id)[1]]

    assert first == second == [str(s.id) for s in expected]


def test_updated_since_returns_only_changed_sessions(owner: Tenant) -> None:
    now = timezone.now()
    conversation(owner.workspace, external_user_id="old", updated_at=now - dt.timedelta(days=3))
    recent, _ = conversation(owner.workspace, external_user_id="new", updated_at=now - dt.timedelta(hours=1))

    since = (now - dt.timedelta(days=1)).isoformat()
    _, lines = export(owner.client(), owner.workspace.id, updated_since=since)
    assert [line["session_id"] for line in lines] == [str(recent.id)]

    # Z suffix, and an unencoded "+" offset that arrives as a space.
    for variant in [timestamp_z(now - dt.timedelta(days=1)), since.replace("+", " ")]:
        _, lines = export(owner.client(), owner.workspace.id, updated_since=variant)
        assert [line["session_id"] for line in lines] == [str(recent.id)], variant


def timestamp_z(value: dt.datetime) -> str:
    return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_feedback_moves_the_session_into_the_next_incremental_export(owner: Tenant) -> None:
    session, messages = conversation(owner.workspace, updated_at=timezone.now() - dt.timedelta(days=3))
    checkpoint = timezone.now().isoformat()
    response = owner.client("chat").post(
        f"/api/v1/workspaces/{owner.workspace.id}/sessions/{session.id}/messages/{messages[1].id}/feedback/",
        {"external_user_id": "alice", "rating": "up"},
        format="json",
    )
    assert response.status_code == 201
    _, lines = export(owner.client(), owner.workspace.id, updated_since=checkpoint)
    assert [line["session_id"] for line in lines] == [str(session.id)]
    assert lines[0]["messages"][1]["feedback"][0]["rating"] == "up"


def test_external_user_id_filter(owner: Tenant) -> None:
    alice, _ = conversation(owner.workspace, external_user_id="alice")
    conversation(owner.workspace, external_user_id="bob")
    _, lines = export(owner.client(), owner.workspace.id, external_user_id="alice")
    assert [line["session_id"] for line in lines] == [str(alice.id)]


def test_playground_sessions_are_left_out_unless_asked_for(owner: Tenant) -> None:
    alice, _ = conversation(owner.workspace, external_user_id="alice")
    console, _ = conversation(owner.workspace, external_user_id="console:curator")
    labelled, _ = conversation(owner.workspace, external_user_id="console:curator:new-hire")
    # Only the reserved prefix counts: an end user merely named like it is kept.
    lookalike, _ = conversation(owner.workspace, external_user_id="consoles:bob")

    _, lines = export(owner.client(), owner.workspace.id)
    assert {line["session_id"] for line in lines} == {str(alice.id), str(lookalike.id)}
    _, lines = export(owner.client(), owner.workspace.id, include_console="false")
    assert {line["session_id"] for line in lines} == {str(alice.id), str(lookalike.id)}
    _, lines = export(owner.client(), owner.workspace.id, include_console="true")
    everyone = {str(s.id) for s in (alice, console, labelled, lookalike)}
    assert {line["session_id"] for line in lines} == everyone
    # Naming a playground end user exports it.
    _, lines = export(owner.client(), owner.workspace.id, external_user_id="console:curator")
    assert [line["session_id"] for line in lines] == [str(console.id)]


@pytest.mark.parametrize(
    "params",
    [
        {"include_console": "sometimes"},
        {"updated_since": "yesterday"},
        {"updated_since": "2026-13-40T00:00:00Z"},
        {"redact": "all"},
        {"redact": ""},
    ],
)
def test_invalid_filters_get_400_envelope(owner: Tenant, params: dict[str, str]) -> None:
    response, _ = export(owner.client(), owner.workspace.id, **params)
    assert response.status_code == 400
    body = response.json()
    assert body["status"] == "error"
    assert body["error"]["code"] == "validation_error"
    assert set(body["error"]["fields"]) == set(params)


def test_chat_key_gets_403(owner: Tenant) -> None:
    conversation(owner.workspace)
    response, lines = export(owner.client("chat"), owner.workspace.id)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"
    assert lines == []


def test_outsider_gets_404(owner: Tenant, outsider: Tenant) -> None:
    conversation(owner.workspace)
    response, lines = export(outsider.client(), owner.workspace.id)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert lines == []


def test_empty_workspace_exports_nothing(owner: Tenant) -> None:
    response, lines = export(owner.client(), owner.workspace.id)
    assert response.status_code == 200
    assert lines == []


def _lines(**kwargs: Any) -> list[bytes]:
    return list(transcripts.transcript_export_lines(**kwargs))


@pytest.mark.parametrize("server_side", [True, False])
def test_small_batches_give_the_same_export_with_or_without_server_side_cursors(
    owner: Tenant, server_side: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = timezone.now()
    for i in range(7):
        turns = [(f"q{i}.{t}", answer_response((f"a{i}.{t}", None))) for t in range(i % 4)]
        conversation(
            owner.workspace,
            external_user_id=f"u{i}",
            turns=turns or None,
            updated_at=now - dt.timedelta(minutes=i % 3),
        )
    Session.objects.create(workspace=owner.workspace, external_user_id="empty", title="No messages")
    sessions = transcripts.transcript_session_list(
        workspace=owner.workspace, filters=transcripts.ExportFilters()
    )
    reference = b"".join(_lines(sessions=sessions))

    monkeypatch.setitem(connection.settings_dict, "DISABLE_SERVER_SIDE_CURSORS", not server_side)
    pieces = _lines(sessions=sessions, session_batch=2, message_chunk=3)

    assert b"".join(pieces) == reference
    assert len(reference.splitlines()) == 8


def test_a_database_failure_mid_stream_ends_with_an_error_line(
    owner: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(3):
        conversation(owner.workspace, external_user_id=f"u{i}")
    sessions = transcripts.transcript_session_list(
        workspace=owner.workspace, filters=transcripts.ExportFilters()
    )
    calls = {"n": 0}
    original = transcripts._feedback_by_message

    def failing(ids: list[Any]) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("connection lost")
        return original(ids)

    monkeypatch.setattr(transcripts, "_feedback_by_message", failing)
    body = b"".join(_lines(sessions=sessions, session_batch=1)).decode()
    lines = body.splitlines()
    assert len(lines) == 2
    assert '"type":"error"' in lines[-1]
    assert "connection lost" not in body


@pytest.mark.django_db(transaction=True)
def test_streaming_after_the_view_returns_works_in_autocommit(
    tenant_factory: Callable[[str], Tenant],
) -> None:
    """No test transaction here: the server-side cursor must be WITH HOLD to survive."""
    owner = tenant_factory("Owner")
    for i in range(5):
        conversation(owner.workspace, external_user_id=f"u{i}")
    assert connection.get_autocommit()
    response = owner.client().get(f"/api/v1/workspaces/{owner.workspace.id}/transcripts/")
    # The view has returned; the generator runs now, as under a WSGI server.
    body = streamed(response)
    assert len(body.splitlines()) == 5


def test_messages_are_read_in_bounded_pages_never_for_the_whole_workspace(owner: Tenant) -> None:
    from django.test.utils import CaptureQueriesContext

    for i in range(6):
        turns = [(f"q{t}", answer_response((f"a{t}", None))) for t in range(3)]
        conversation(owner.workspace, external_user_id=f"u{i}", turns=turns)
    sessions = transcripts.transcript_session_list(
        workspace=owner.workspace, filters=transcripts.ExportFilters()
    )

    with CaptureQueriesContext(connection) as queries:
        lines = _lines(sessions=sessions, session_batch=2, message_chunk=4)

    assert len(b"".join(lines).splitlines()) == 6
    message_queries = [q["sql"] for q in queries.captured_queries if 'FROM "chat_message"' in q["sql"]]
    assert message_queries
    for sql in message_queries:
        assert "LIMIT 4" in sql
        assert "array_position" in sql


def test_admin_key_limited_to_another_workspace_gets_404(owner: Tenant) -> None:
    from tests.conftest import api_client
    from workspaces import services
    from workspaces.models import ApiKeyScope

    conversation(owner.workspace)
    other = WorkspaceFactory.create(organization=owner.organization)
    limited = services.api_key_create(
        organization=owner.organization, name="limited", scope=ApiKeyScope.ADMIN, workspace_ids=[other.id]
    )
    client = api_client(limited.plaintext)
    response, lines = export(client, owner.workspace.id)
    assert response.status_code == 404
    assert lines == []
    assert client.delete(f"/api/v1/workspaces/{owner.workspace.id}/end-users/alice/").status_code == 404
    assert Session.objects.filter(workspace=owner.workspace).count() == 1
    assert export(client, other.id)[0].status_code == 200
