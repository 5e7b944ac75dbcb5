"""The console shows the access each reply's turn retrieved within (the
filters, groups and token resources stored on the reply): in a transcript,
beside each reply, and in the dashboard's list of answers to look at."""

from __future__ import annotations

import html
import re

import pytest

from chat.models import Message
from console.dashboard import access_summary
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant
from tests.staff import Staff
from tests.transcripts.factories import answer_response, conversation

pytestmark = pytest.mark.django_db

QUESTION = "What are the cardiology ward visiting hours?"


def _accesses(page: str) -> list[str]:
    found = re.findall(r"<p class=\"access muted\" data-access>Retrieved within: ([^<]*)</p>", page)
    return [html.unescape(text) for text in found]


def test_access_summary_names_each_restriction() -> None:
    assert access_summary(None) is None
    assert access_summary({"filters": None, "groups": None, "resource_ids": None}) == "every document"
    assert (
        access_summary(
            {
                "filters": {"type": "eq", "key": "kind", "value": "rota"},
                "groups": ["staff", "sales"],
                "resource_ids": None,
            }
        )
        == 'filters {"key":"kind","type":"eq","value":"rota"} · groups staff, sales'
    )
    assert (
        access_summary({"filters": None, "groups": [], "resource_ids": ["a", "b"]})
        == "no groups (open documents only) · 2 token resources"
    )


def test_a_transcript_shows_each_replys_access(owner: Tenant, curator: Staff) -> None:
    ingest_text(owner.workspace, "Ward visits", "Cardiology ward visiting hours are 2 to 4 pm daily.")
    filters = {"type": "eq", "key": "kind", "value": "<rota>"}
    turn = owner.client("admin").post(
        f"/api/v1/workspaces/{owner.workspace.id}/chat/",
        {"external_user_id": "alice", "message": QUESTION, "filters": filters, "groups": ["staff"]},
        format="json",
    )
    assert turn.status_code == 200, turn.json()
    session_id = turn.json()["data"]["session"]["id"]
    owner.client("admin").post(
        f"/api/v1/workspaces/{owner.workspace.id}/chat/",
        {"external_user_id": "alice", "session_id": session_id, "message": "And on Sundays?"},
        format="json",
    )

    page = curator.client.get(
        f"/admin/console/{owner.workspace.id}/transcripts/{session_id}/"
    ).content.decode()

    # One line per reply, none for questions; escaped like any stored text.
    assert _accesses(page) == [
        'filters {"key":"kind","type":"eq","value":"<rota>"} · groups staff',
        "every document",
    ]
    assert "&lt;rota&gt;" in page and "<rota>" not in page


def test_a_reply_without_a_recorded_access_shows_none(owner: Tenant, curator: Staff) -> None:
    session, messages = conversation(owner.workspace, turns=[("Hello?", answer_response(("Hi.", None)))])
    assert messages[1].access is None

    page = curator.client.get(
        f"/admin/console/{owner.workspace.id}/transcripts/{session.id}/"
    ).content.decode()

    assert _accesses(page) == [] and "Hi." in page


def test_the_dashboard_names_the_access_of_an_answer_to_look_at(
    owner: Tenant, outsider: Tenant, curator: Staff
) -> None:
    """A filter that matches nothing answers "the documents don't say": the
    curator sees it came from the filter, not from a missing document."""
    ingest_text(owner.workspace, "Ward visits", "Cardiology ward visiting hours are 2 to 4 pm daily.")
    nothing = {"type": "eq", "key": "dept", "value": "oncology"}
    turn = (
        owner.client("admin")
        .post(
            f"/api/v1/workspaces/{owner.workspace.id}/chat/",
            {"external_user_id": "alice", "message": QUESTION, "filters": nothing},
            format="json",
        )
        .json()["data"]
    )
    assert turn["assistant_message"]["grounding"] == "none"
    ingest_text(outsider.workspace, "Ward visits", "Cardiology ward visiting hours are 1 to 3 pm.")
    outsider.client("admin").post(
        f"/api/v1/workspaces/{outsider.workspace.id}/chat/",
        {
            "external_user_id": "bob",
            "message": QUESTION,
            "filters": {"type": "eq", "key": "x", "value": "secret-9"},
        },
        format="json",
    )

    page = curator.client.get(f"/admin/console/{owner.workspace.id}/dashboard/").content.decode()

    review = page[page.index('id="review"') :]
    row = review[review.index(f'data-message="{turn["assistant_message"]["id"]}"') :]
    row = row[: row.index("</tr>")]
    assert "oncology" in row and "no answer" in row
    assert "secret-9" not in page
    assert Message.objects.get(id=turn["assistant_message"]["id"]).access == {
        "filters": nothing,
        "groups": None,
        "resource_ids": None,
    }
