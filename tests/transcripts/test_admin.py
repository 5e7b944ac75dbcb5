from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from chat.models import Message, Session
from tests.conftest import Tenant
from tests.responses import streamed
from tests.transcripts.factories import answer_response, conversation, feedback

pytestmark = pytest.mark.django_db

SOURCE = {
    "resource_id": "0b6f5f7e-1d1e-4a53-9f4e-0e8e3c1b2a10",
    "resource_title": "Refund policy",
    "passage_id": "p-7",
}
FORM = {
    "title": "Claim form",
    "fields": [
        {"name": "policy_no", "label": "Policy number", "type": "text", "required": True},
        {"name": "kind", "label": "Kind", "type": "select", "required": False, "options": ["car", "home"]},
    ],
}


@pytest.fixture
def staff(db: None) -> Client:
    client = Client()
    # force_login needs no password (and skips the slow hasher).
    client.force_login(User.objects.create(username="root", is_staff=True, is_superuser=True))
    return client


def test_transcript_page_shows_messages_citations_form_and_feedback(staff: Client, owner: Tenant) -> None:
    session, messages = conversation(
        owner.workspace,
        external_user_id="alice",
        turns=[
            (
                "How long to get a refund?",
                answer_response(("Thirty days <b>max</b>.", SOURCE), ("Ask us.", None)),
            ),
            ("File a claim", {**answer_response(("Which policy?", None)), "form": FORM}),
        ],
    )
    feedback(messages[1], rating="down", comment="too vague")

    page = staff.get(f"/admin/chat/session/{session.id}/change/").content.decode()

    assert "How long to get a refund?" in page
    assert "Thirty days &lt;b&gt;max&lt;/b&gt;." in page  # escaped, never rendered as HTML
    assert "Source: Refund policy — passage <code>p-7</code>" in page
    assert "No source" in page
    assert "Form: Claim form" in page and "Policy number" in page and "car, home" in page
    assert "too vague" in page and "<strong>down</strong>" in page
    # Read-only: no save buttons.
    assert 'name="_save"' not in page


def test_changelist_filters_by_end_user_and_workspace(staff: Client, owner: Tenant) -> None:
    conversation(owner.workspace, external_user_id="alice", title="Alice asks")
    conversation(owner.workspace, external_user_id="bob", title="Bob asks")
    page = staff.get("/admin/chat/session/", {"q": "alice"}).content.decode()
    assert "Alice asks" in page and "Bob asks" not in page
    page = staff.get(
        "/admin/chat/session/", {"workspace__id__exact": str(owner.workspace.id)}
    ).content.decode()
    assert "Alice asks" in page and "Bob asks" in page


@pytest.mark.parametrize("redact", [False, True])
def test_export_action_downloads_selected_sessions(staff: Client, owner: Tenant, redact: bool) -> None:
    chosen, _ = conversation(
        owner.workspace,
        external_user_id="alice",
        turns=[
            ("mail me at alice@example.org", answer_response(("Sure.", SOURCE))),
        ],
    )
    conversation(owner.workspace, external_user_id="bob")
    action = "export_ndjson_redacted" if redact else "export_ndjson"

    response = staff.post("/admin/chat/session/", {"action": action, "_selected_action": [str(chosen.id)]})

    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment;")
    lines = [json.loads(line) for line in streamed(response).decode().splitlines()]
    sessions = [line for line in lines if line["type"] == "session"]
    assert [line["session_id"] for line in sessions] == [str(chosen.id)]
    content = sessions[0]["messages"][0]["content"]
    if redact:
        assert content == "mail me at [EMAIL]"
        assert lines[-1] == {
            "type": "report",
            "counts": {"email": 1},
            "paths": ["sessions[0].messages[0].content"],
        }
    else:
        assert content == "mail me at alice@example.org"


def test_messages_and_feedback_are_read_only(staff: Client, owner: Tenant) -> None:
    _, messages = conversation(owner.workspace)
    item = feedback(messages[1])
    assert staff.get(f"/admin/chat/message/{messages[0].id}/change/").status_code == 200
    assert staff.get("/admin/chat/message/add/").status_code == 403
    assert staff.get(f"/admin/chat/feedback/{item.id}/delete/").status_code == 403
    assert staff.post(f"/admin/chat/message/{messages[0].id}/change/", {"content": "x"}).status_code == 403
    assert Message.objects.get(pk=messages[0].pk).content == messages[0].content
    assert Session.objects.count() == 1
