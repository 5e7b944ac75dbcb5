"""Searching transcripts (end user, date range, text in a question) and
reading one: parts with their sources linked to the passages, feedback, and
each reply's outcome."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.utils import timezone

from chat.models import Message, Session
from retrieval.models import Passage
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant
from tests.staff import Staff
from tests.transcripts.factories import answer_response, conversation, feedback

pytestmark = pytest.mark.django_db


def _found(staff: Staff, tenant: Tenant, **params: str) -> list[str]:
    response = staff.client.get(f"/admin/console/{tenant.workspace.id}/transcripts/", params)
    assert response.status_code == 200, response.content[:2000]
    return re.findall(r'<tr data-session="([0-9a-f-]+)"', response.content.decode())


def _age(session: Session, days: int) -> None:
    moment = timezone.now() - dt.timedelta(days=days)
    Session.objects.filter(pk=session.pk).update(created_at=moment, updated_at=moment)


def test_search_by_end_user_question_text_and_dates(owner: Tenant, outsider: Tenant, curator: Staff) -> None:
    refund, _ = conversation(
        owner.workspace,
        external_user_id="alice",
        turns=[("How do REFUNDS work?", answer_response(("Like so.", None)))],
    )
    shipping, _ = conversation(
        owner.workspace,
        external_user_id="bob",
        turns=[("Where is my parcel?", answer_response(("Here.", None)))],
    )
    old, _ = conversation(
        owner.workspace, external_user_id="alice", turns=[("Refunds again?", answer_response(("Yes.", None)))]
    )
    _age(old, 40)
    playground, _ = conversation(
        owner.workspace,
        external_user_id="console:curator",
        turns=[("Refunds?", answer_response(("Yes.", None)))],
    )
    conversation(
        outsider.workspace, external_user_id="alice", turns=[("Refunds?", answer_response(("Yes.", None)))]
    )

    assert _found(curator, owner) == [str(shipping.id), str(refund.id), str(old.id)]
    assert _found(curator, owner, external_user_id="alice") == [str(refund.id), str(old.id)]
    # Case-insensitive text in one of the user's questions (not in the answers).
    assert _found(curator, owner, question="refunds") == [str(refund.id), str(old.id)]
    assert _found(curator, owner, question="like so") == []
    since = (timezone.now() - dt.timedelta(days=7)).date().isoformat()
    assert _found(curator, owner, question="refunds", date_from=since) == [str(refund.id)]
    until = (timezone.now() - dt.timedelta(days=30)).date().isoformat()
    assert _found(curator, owner, date_to=until) == [str(old.id)]
    assert _found(curator, owner, question="refunds", include_console="on") == [
        str(playground.id),
        str(refund.id),
        str(old.id),
    ]
    assert _found(curator, owner, external_user_id="console:curator") == [str(playground.id)]


def test_search_pages_through_older_sessions(
    owner: Tenant, curator: Staff, monkeypatch: pytest.MonkeyPatch
) -> None:
    from console.views import transcripts

    monkeypatch.setattr(transcripts, "PAGE_SIZE", 2)
    sessions = [conversation(owner.workspace, external_user_id=f"u{i}")[0] for i in range(5)]
    for age, session in enumerate(reversed(sessions)):
        _age(session, age)
    seen: list[str] = []
    url = f"/admin/console/{owner.workspace.id}/transcripts/?external_user_id="
    while url:
        page = curator.client.get(url).content.decode()
        seen += re.findall(r'<tr data-session="([0-9a-f-]+)"', page)
        found = re.search(r'<a href="([^"]+)" id="next-page">', page)
        url = (
            f"/admin/console/{owner.workspace.id}/transcripts/" + found.group(1).replace("&amp;", "&")
            if found
            else ""
        )
    assert seen == [str(s.id) for s in reversed(sessions)]


@pytest.mark.parametrize(
    "params",
    [
        {"date_from": "yesterday"},
        {"date_from": "2026-05-02", "date_to": "2026-05-01"},
        {"cursor": "nonsense"},
    ],
)
def test_invalid_search_is_a_400(owner: Tenant, curator: Staff, params: dict[str, str]) -> None:
    response = curator.client.get(f"/admin/console/{owner.workspace.id}/transcripts/", params)
    assert response.status_code == 400


def test_a_transcript_shows_parts_sources_feedback_and_outcomes(owner: Tenant, curator: Staff) -> None:
    resource = ingest_text(owner.workspace, "Refund policy", "Refunds take thirty days.")
    passage = Passage.objects.get(resource=resource)
    source = {
        "resource_id": str(resource.id),
        "resource_title": "Refund policy",
        "passage_id": str(passage.id),
    }
    session, messages = conversation(
        owner.workspace,
        external_user_id="alice",
        turns=[
            (
                "How long do refunds take?",
                answer_response(("Thirty days.", source), ("Anything else?", None)),
            ),
            ("<b>And</b> exchanges?", answer_response(("I do not know.", None))),
        ],
    )
    feedback(messages[3], rating="down", comment="not helpful")

    page = curator.client.get(
        f"/admin/console/{owner.workspace.id}/transcripts/{session.id}/"
    ).content.decode()
    assert re.findall(r'data-role="(\w+)"', page) == ["user", "assistant", "user", "assistant"]
    assert re.findall(r'data-outcome="(\w+)"', page) == ["cited", "no_citation"]
    passage_url = f"/admin/console/{owner.workspace.id}/passages/{passage.id}/"
    assert f'<a href="{passage_url}">Refund policy</a>' in page
    assert "no source" in page and "not helpful" in page
    assert "&lt;b&gt;And&lt;/b&gt; exchanges?" in page
    opened = curator.client.get(passage_url)
    assert opened.status_code == 200 and "Refunds take thirty days." in opened.content.decode()


def test_a_reingested_passage_is_gone_and_its_citation_no_longer_links(owner: Tenant, curator: Staff) -> None:
    source = {
        "resource_id": "0b6f5f7e-1d1e-4a53-9f4e-0e8e3c1b2a10",
        "resource_title": "Old",
        "passage_id": "p-42",
    }
    session, _ = conversation(owner.workspace, turns=[("Q?", answer_response(("A.", source)))])
    page = curator.client.get(
        f"/admin/console/{owner.workspace.id}/transcripts/{session.id}/"
    ).content.decode()
    assert "p-42" in page and "/passages/" not in page
    gone = "0b6f5f7e-1d1e-4a53-9f4e-0e8e3c1b2a11"
    assert curator.client.get(f"/admin/console/{owner.workspace.id}/passages/{gone}/").status_code == 404


def test_a_transcript_says_why_a_reply_is_no_answer(owner: Tenant, curator: Staff) -> None:
    session, messages = conversation(
        owner.workspace, turns=[("What is the capital of France?", answer_response(("No idea.", None)))]
    )
    figures = {"answerability": 0.21437, "threshold": 0.38}
    Message.objects.filter(id=messages[1].id).update(reason="below_threshold", reason_figures=figures)
    page = curator.client.get(
        f"/admin/console/{owner.workspace.id}/transcripts/{session.id}/"
    ).content.decode()
    assert re.findall(r'data-reason="(\w+)"', page) == ["below_threshold"]
    [shown] = re.findall(r"Why: <code>below_threshold</code> (.*)</p>", page)
    assert sorted(shown.split(" · ")) == ["answerability 0.214", "threshold 0.38"]
