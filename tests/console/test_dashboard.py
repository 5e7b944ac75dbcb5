"""The dashboard: its figures come from the stored turns (made here through
the chat API with the embedded extractive engine, real retrieval and real
embeddings), each reply has exactly one outcome, and the number of queries
does not grow with the number of sessions."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from chat import analytics
from chat.models import Feedback, Message, MessageRole
from chat.outcomes import ReplyOutcome
from chat.services.messages import CLIENT_MODEL
from console.charts import Bar, bar_list
from tests.chat.helpers import chat_data, ingest_text
from tests.conftest import Tenant
from tests.staff import Staff
from tests.transcripts.factories import answer_response, conversation, feedback, replies_of_every_outcome

pytestmark = pytest.mark.django_db


def _parts(message: Message) -> list[dict[str, Any]]:
    """A stored reply's parts (every assistant message stores its response)."""
    assert message.response is not None
    parts: list[dict[str, Any]] = message.response["parts"]
    return parts


def _pin(tenant: Tenant) -> dt.date:
    """Date the workspace's turns and feedback at one moment and return its
    day: the page's window (the last 30 days) holds that day even when the
    page is drawn after midnight, so no assertion depends on the clock."""
    moment = timezone.now()
    Message.objects.filter(session__workspace=tenant.workspace).update(created_at=moment)
    Feedback.objects.filter(message__session__workspace=tenant.workspace).update(updated_at=moment)
    return moment.astimezone(dt.UTC).date()


def _rate(tenant: Tenant, turn: dict[str, Any], user: str, rating: str) -> None:
    session_id, message_id = turn["session"]["id"], turn["assistant_message"]["id"]
    response = tenant.client("chat").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/sessions/{session_id}/messages/{message_id}/feedback/",
        {"external_user_id": user, "rating": rating},
        format="json",
    )
    assert response.status_code in (200, 201), response.json()


def _bars(page: str, chart_id: str) -> dict[str, int]:
    """``data-label`` -> ``data-value`` of the bars inside one chart's section."""
    section = page[page.index(f'id="{chart_id}"') :]
    section = section[: section.index("</section>")]
    return {
        label: int(value) for label, value in re.findall(r'data-label="([^"]*)" data-value="(\d+)"', section)
    }


@pytest.mark.slow
def test_the_dashboard_shows_what_real_turns_did(owner: Tenant, curator: Staff) -> None:
    refunds = ingest_text(
        owner.workspace,
        "Refund policy",
        "Refunds are paid within thirty days of the return.\n\nGift cards are never refunded in cash.",
    )
    ingest_text(owner.workspace, "Warranty", "Appliances carry a two-year warranty on parts.")
    first = chat_data(owner, external_user_id="alice", message="How long do refunds take?")
    chat_data(owner, external_user_id="alice", message="Are gift cards refunded in cash?")
    chat_data(owner, external_user_id="bob", message="When are refunds paid?")
    _rate(owner, first, "alice", "down")
    # A playground turn: left out of the dashboard unless asked for.
    curator.client.post(
        f"/admin/console/{owner.workspace.id}/playground/", {"question": "How long do refunds take?"}
    )

    stored = list(
        Message.objects.filter(session__workspace=owner.workspace, role=MessageRole.ASSISTANT).exclude(
            session__external_user_id__startswith="console:"
        )
    )
    cited_refunds = sum(
        any(p["source"] and p["source"]["resource_id"] == str(refunds.id) for p in _parts(m)) for m in stored
    )
    assert cited_refunds >= 1

    today = _pin(owner).isoformat()
    page = curator.client.get(f"/admin/console/{owner.workspace.id}/dashboard/").content.decode()
    turns = _bars(page, "chart-turns")
    assert len(turns) == 30 and turns[today] == 3 and sum(turns.values()) == 3
    outcomes = _bars(page, "chart-outcomes")
    assert sum(outcomes.values()) == 3
    assert outcomes["cited"] == sum(any(p["source"] for p in _parts(m)) for m in stored)
    assert _bars(page, "chart-grounding")["documents"] == 3
    feedback_bars = _bars(page, "chart-feedback")
    assert feedback_bars[f"{today} down"] == 1 and feedback_bars[f"{today} up"] == 0
    assert _bars(page, "chart-cited")["Refund policy"] == cited_refunds
    never = page[page.index('id="never-cited"') :]
    assert "Warranty" in never[: never.index("</section>")]
    # The disliked answer, linking to its transcript at the reply.
    session_id, message_id = first["session"]["id"], first["assistant_message"]["id"]
    link = f"/admin/console/{owner.workspace.id}/transcripts/{session_id}/#message-{message_id}"
    assert link in page and "How long do refunds take?" in page

    with_console = curator.client.get(f"/admin/console/{owner.workspace.id}/dashboard/?include_console=1")
    assert _bars(with_console.content.decode(), "chart-turns")[today] == 4


def test_each_reply_has_exactly_one_outcome(owner: Tenant) -> None:
    replies_of_every_outcome(owner.workspace)
    # History an integrator supplied in `messages` is not a reply of the service.
    _, supplied = conversation(
        owner.workspace, external_user_id="history", turns=[("Hi", answer_response(("Hello", None)))]
    )
    Message.objects.filter(pk=supplied[1].pk).update(model=CLIENT_MODEL)

    window = analytics.Window(workspace=owner.workspace, since=timezone.now() - dt.timedelta(days=1))
    breakdown = analytics.reply_breakdown(window)
    assert breakdown.by_outcome == {outcome.value: 1 for outcome in ReplyOutcome}
    assert breakdown.total == 9
    review = analytics.replies_to_review(window)
    # A no-answer is the curator's sign of a missing document; a form asked back.
    assert {item.external_user_id for item in review} == {"no_citation", "fallback", "no_answer", "form"}


def test_the_window_is_thirty_days_and_playground_turns_stay_out(owner: Tenant) -> None:
    _old, messages = conversation(owner.workspace, external_user_id="alice")
    Message.objects.filter(pk=messages[1].pk).update(created_at=timezone.now() - dt.timedelta(days=31))
    conversation(owner.workspace, external_user_id="bob")
    conversation(owner.workspace, external_user_id="console:curator")
    since = timezone.now() - dt.timedelta(days=30)
    window = analytics.Window(workspace=owner.workspace, since=since)
    assert sum(analytics.replies_per_day(window).values()) == 1
    with_console = analytics.Window(workspace=owner.workspace, since=since, include_console=True)
    assert sum(analytics.replies_per_day(with_console).values()) == 2


def _activity(tenant: Tenant, sessions: int, resource_id: str) -> None:
    source = {"resource_id": resource_id, "resource_title": "Guide", "passage_id": str(uuid.uuid4())}
    for i in range(sessions):
        _, messages = conversation(
            tenant.workspace,
            external_user_id=f"user-{i}-{uuid.uuid4().hex[:6]}",
            turns=[
                ("Cited?", answer_response(("Yes.", source))),
                ("Uncited?", answer_response(("No.", None))),
            ],
        )
        feedback(messages[1], rating="up")
        feedback(messages[3], rating="down")


def test_the_dashboards_queries_do_not_grow_with_the_number_of_sessions(
    owner: Tenant, curator: Staff
) -> None:
    guide = ingest_text(owner.workspace, "Guide", "The guide says hello.")
    ingest_text(owner.workspace, "Unused", "Nobody cites this one.")
    url = f"/admin/console/{owner.workspace.id}/dashboard/"
    _activity(owner, 1, str(guide.id))
    curator.client.get(url)  # warm: session, permissions, content types
    with CaptureQueriesContext(connection) as one_session:
        assert curator.client.get(url).status_code == 200
    _activity(owner, 25, str(guide.id))
    today = _pin(owner).isoformat()
    with CaptureQueriesContext(connection) as many_sessions:
        response = curator.client.get(url)
    assert response.status_code == 200
    assert _bars(response.content.decode(), "chart-turns")[today] == 52
    assert len(many_sessions) == len(one_session), [q["sql"][:120] for q in many_sessions.captured_queries]
    assert len(many_sessions) <= 15


def test_chart_labels_are_escaped() -> None:
    svg = bar_list([Bar('<script>alert("x")</script>', 3, href="/a?b=1&c=2")], title="T & <U>")
    assert "<script>" not in svg
    assert "&lt;script&gt;" in svg and "T &amp; &lt;U&gt;" in svg and 'href="/a?b=1&amp;c=2"' in svg
