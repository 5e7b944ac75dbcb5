"""The playground runs the API's own chat turn (the embedded extractive
engine, real retrieval, real embeddings) and shows why the answer is what it
is: passages in prompt order with their three scores, the question's terms
marked, citations linked to passages, and the exact prompt."""

from __future__ import annotations

import html
import re
import uuid

import pytest
from pytest_django import Settings

from chat.models import Message, MessageRole, Session
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant
from tests.staff import Staff

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

REFUNDS = (
    "Refunds are paid within thirty days of the return reaching our warehouse.\n\n"
    "A refund goes back to the card that paid for the order.\n\n"
    "Gift cards are never refunded in cash."
)
SHIPPING = (
    "Parcels ship from Rotterdam every weekday morning.\n\n"
    "Express shipping arrives the next working day in the Netherlands."
)
QUESTION = "How long do refunds take?"


@pytest.fixture
def documents(owner: Tenant) -> dict[str, uuid.UUID]:
    return {
        "refunds": ingest_text(owner.workspace, "Refund policy", REFUNDS).id,
        "shipping": ingest_text(owner.workspace, "Shipping", SHIPPING).id,
    }


def _ask(staff: Staff, tenant: Tenant, **data: object) -> tuple[int, str]:
    response = staff.client.post(
        f"/admin/console/{tenant.workspace.id}/playground/", {"question": QUESTION, **data}
    )
    return response.status_code, response.content.decode()


def test_a_playground_turn_is_the_apis_turn_shown_with_its_passages(
    owner: Tenant, curator: Staff, documents: dict[str, uuid.UUID]
) -> None:
    status, page = _ask(curator, owner)
    assert status == 200, page

    # Stored like any turn, for the reserved end user of this console user.
    session = Session.objects.get(workspace=owner.workspace)
    assert session.external_user_id == "console:curator"
    question, reply = session.messages.order_by("sequence")
    assert (question.role, question.content) == (MessageRole.USER, QUESTION)
    assert reply.role == MessageRole.ASSISTANT and reply.model == "extractive"

    # The integrator's answer to the same question is the same answer.
    api = owner.client("admin").post(
        f"/api/v1/workspaces/{owner.workspace.id}/chat/",
        {"external_user_id": "integrator", "message": QUESTION, "include_prompt_trace": True},
        format="json",
    )
    assert api.status_code == 200, api.json()
    data = api.json()["data"]
    assert reply.response == data["assistant_message"]["response"]
    trace_ids = [p["passage_id"] for p in data["prompt_trace"]["passages"]]

    # Passages in prompt order, each with fused, dense and lexical scores.
    shown = re.findall(r'<details class="passage[^"]*" id="passage-([0-9a-f-]+)"', page)
    assert shown == trace_ids
    assert page.count('class="score fused"') == page.count('class="score dense"') == len(shown)
    assert page.count('class="score lexical"') == len(shown)
    # The question's terms, stemmed as the lexical leg stems them.
    assert "<mark>Refunds</mark> are paid" in page and "<mark>refund</mark> goes back" in page
    assert "<mark>How</mark>" not in page

    # Every cited part links to a passage shown on the page.
    citations = re.findall(r'<a class="citation" href="#passage-([0-9a-f-]+)"', page)
    cited_sources = [p["source"]["passage_id"] for p in reply.response["parts"] if p["source"]]
    assert citations == cited_sources and citations
    assert set(citations) <= set(shown)
    # The prompt trace: the exact messages, behind a toggle.
    assert '<details class="console-card" id="prompt-trace">' in page
    assert "How long do refunds take?" in page


def test_the_next_question_continues_the_conversation(
    owner: Tenant, curator: Staff, documents: dict[str, uuid.UUID]
) -> None:
    _ask(curator, owner)
    session = Session.objects.get(workspace=owner.workspace)
    status, page = _ask(curator, owner, session_id=str(session.id))
    assert status == 200, page
    session.refresh_from_db()
    assert session.message_count == 4
    assert Session.objects.filter(workspace=owner.workspace).count() == 1
    assert f'value="{session.id}"' in page  # the form keeps continuing it


def test_a_label_makes_a_second_playground_end_user(
    owner: Tenant, curator: Staff, documents: dict[str, uuid.UUID]
) -> None:
    status, _ = _ask(curator, owner, label="new-hire")
    assert status == 200
    assert Session.objects.get(workspace=owner.workspace).external_user_id == "console:curator:new-hire"
    status, page = _ask(curator, owner, label="not a label!")
    assert status == 400 and "Letters, digits" in page


def test_named_resources_widen_retrieval(
    owner: Tenant, curator: Staff, documents: dict[str, uuid.UUID]
) -> None:
    status, page = _ask(curator, owner, resources=[str(documents["shipping"])])
    assert status == 200, page
    assert "Parcels ship from Rotterdam" in page  # the named resource is represented


def test_filters_and_groups_narrow_the_playground_turn(
    owner: Tenant, curator: Staff, documents: dict[str, uuid.UUID]
) -> None:
    from resources.models import Resource

    Resource.objects.filter(id=documents["refunds"]).update(metadata={"kind": "refunds"})
    Resource.objects.filter(id=documents["shipping"]).update(access={"groups": ["logistics"]})
    status, page = _ask(curator, owner, filters='{"type": "eq", "key": "kind", "value": "shipping"}')
    assert status == 200, page
    assert "Refunds are paid" not in page and "nothing was retrieved" in page
    assert 'Retrieved within: filters {"key":"kind","type":"eq",' in html.unescape(page)
    status, page = _ask(curator, owner, groups="sales", resources=[str(documents["shipping"])])
    assert status == 200, page
    assert "Parcels ship from Rotterdam" not in page and "Refunds are paid" in page
    assert "Retrieved within: groups sales</p>" in page
    status, page = _ask(curator, owner, filters='{"type": "or", "filters": [{"type": "like"}]}')
    assert status == 400 and "filters.filters[0].type" in page


def test_bad_input_is_a_400_and_stores_nothing(
    owner: Tenant, outsider: Tenant, curator: Staff, documents: dict[str, uuid.UUID]
) -> None:
    foreign = ingest_text(outsider.workspace, "Theirs", "Their own text.")
    for data in ({"question": "   "}, {"resources": [str(foreign.id)]}, {"session_id": "not-a-uuid"}):
        status, _ = _ask(curator, owner, **data)
        assert status == 400, data
    assert not Message.objects.exists()


def test_another_end_users_session_is_a_404_and_stores_nothing(
    owner: Tenant, curator: Staff, documents: dict[str, uuid.UUID]
) -> None:
    owner.client("admin").post(
        f"/api/v1/workspaces/{owner.workspace.id}/chat/",
        {"external_user_id": "alice", "message": "Hello"},
        format="json",
    )
    alice = Session.objects.get(external_user_id="alice")
    status, page = _ask(curator, owner, session_id=str(alice.id))
    assert status == 404 and 'data-code="not_found"' in page
    assert Session.objects.count() == 1 and Message.objects.count() == 2


def test_a_workspace_with_nothing_ready_answers_from_general_knowledge(owner: Tenant, curator: Staff) -> None:
    status, page = _ask(curator, owner)
    assert status == 200, page
    assert 'data-grounding="general_knowledge"' in page
    assert "the workspace has no ready resources" in page


def test_the_playground_form_offers_ready_resources_and_the_models(
    owner: Tenant, curator: Staff, documents: dict[str, uuid.UUID]
) -> None:
    page = curator.client.get(f"/admin/console/{owner.workspace.id}/playground/").content.decode()
    assert "Refund policy" in page and "Shipping" in page
    assert '<option value="extractive"' in page
    assert "console:curator" in page


def test_the_playground_shows_the_standalone_question_and_the_answerability(
    owner: Tenant, curator: Staff, documents: dict[str, uuid.UUID]
) -> None:
    owner.workspace.answerability_threshold = 0.38
    owner.workspace.save()
    _ask(curator, owner)
    session = Session.objects.get(workspace=owner.workspace)
    status, page = _ask(curator, owner, session_id=str(session.id), question="And to which card?")
    assert status == 200, page
    queries = re.findall(r'<q class="retrieval-query">([^<]*)</q>', page)
    assert queries == ["And to which card?", f"And to which card? {QUESTION}"]
    score = re.search(r'<dd id="answerability">([0-9.]+) <span class="muted">\(threshold 0.38\)', page)
    assert score is not None and 0 < float(score.group(1)) <= 1
    assert 'data-decision="answer"' in page
    status, page = _ask(curator, owner, question="What is the capital of France?")
    assert 'data-decision="no_answer"' in page


def test_with_prompt_traces_off_the_playground_answers_without_the_prompt(
    owner: Tenant, curator: Staff, documents: dict[str, uuid.UUID], settings: Settings
) -> None:
    """A deployment that keeps prompt traces off (the default outside make
    run) still has a working playground: the answer, passages and decision,
    not the exact prompt."""
    settings.PROMPT_TRACE_ENABLED = False
    status, page = _ask(curator, owner)
    assert status == 200, page
    reply = Message.objects.get(session__workspace=owner.workspace, role=MessageRole.ASSISTANT)
    assert "thirty days" in reply.content and "thirty days" in page
    assert 'id="prompt-trace-off"' in page and 'id="prompt-trace"' not in page
    assert "PROMPT_TRACE_ENABLED" in page
