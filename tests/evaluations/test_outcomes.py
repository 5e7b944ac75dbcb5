"""A reply's outcome in an evaluation is the analytics' one classification
(chat/outcomes.py) in the evaluation's words, read from the stored reply:
cited → answered, no_answer → abstained, form → asked, anything else →
other; a question mark ends a reply without making it ask back."""

from __future__ import annotations

import pytest

from chat.models import Message
from chat.outcomes import ReplyOutcome, message_outcome
from evaluations.outcomes import OUTCOME_CHOICES, first_cited_resource, reply_evaluated_outcome
from tests.conftest import Tenant
from tests.transcripts.factories import answer_response, conversation, replies_of_every_outcome

pytestmark = pytest.mark.django_db

EXPECTED = {"cited": "answered", "no_answer": "abstained", "form": "asked"}


def test_every_analytics_outcome_has_one_evaluation_outcome(owner: Tenant) -> None:
    replies = replies_of_every_outcome(owner.workspace)
    assert set(replies) == {outcome.value for outcome in ReplyOutcome}
    for name, reply in replies.items():
        assert message_outcome(message=reply) == name
        assert reply_evaluated_outcome(reply) == EXPECTED.get(name, "other"), name
    assert {word for word, _ in OUTCOME_CHOICES} == {"answered", "abstained", "asked", "other"}


@pytest.mark.parametrize(
    "text",
    ["Which policy do you mean?", "منظورتان کدام سیاست است؟", "أي سياسة تقصد؟", "Welche Richtlinie?"],
)
def test_a_question_mark_does_not_ask_back(owner: Tenant, text: str) -> None:
    """Only a form asks back: an uncited reply ending in "?" or "؟" is other."""
    _, messages = conversation(owner.workspace, turns=[("Policy?", answer_response((text, None)))])
    assert messages[1].content == text
    assert reply_evaluated_outcome(messages[1]) == "other"


def test_the_first_cited_document(owner: Tenant) -> None:
    source = {"resource_id": "6a1d7e59-5d1e-4f4e-9b7a-1d0c1f3e2a10", "resource_title": "P", "passage_id": "x"}
    response = answer_response(("Anything else?", None), ("Thirty days.", source), ("And", source))
    _, messages = conversation(owner.workspace, turns=[("Refunds?", response)])
    assert first_cited_resource(messages[1]) == source["resource_id"]
    assert first_cited_resource(Message(content="Hello")) is None


@pytest.mark.parametrize("text", ["منظورتان کدام سیاست است؟", "أي سياسة تقصد؟", "Which policy do you mean?"])
def test_a_stored_form_asks_back_whatever_its_text_ends_with(owner: Tenant, text: str) -> None:
    """The same question, stored as a form, is asked: the form decides, in any language."""
    form = {"title": "?", "fields": [{"name": "subject", "label": text, "type": "select", "required": True}]}
    _, messages = conversation(owner.workspace, turns=[("Policy?", answer_response((text, None), form=form))])
    assert messages[1].reply is not None and messages[1].reply["type"] == "form"
    assert reply_evaluated_outcome(messages[1]) == "asked"
