"""Parallel documents that word the same fact each their own way, through
the chat API on the extractive engine: an FAQ and a user manual of two
routers, and two laptops' data sheets whose only difference of name is a
number (chat/services/turn/clarify.py, subjects.py, retrieve.py).

- The FAQ's "To reset the password of the Router R1, hold …" and the
  manual's "The administrator password of the Router R2 is reset by …"
  answer "How do I reset the password?" with the same of its words: asked
  back; a router neither covers is "the documents don't say".
- After the user chose one in the form, a follow-up stays on it: the other
  document the form offered is its counterpart, however differently written.
- "The Aero 14 weighs 1.2 kg." beside "At 1.7 kg, the Aero 16 is easy to
  carry.": the same kind of document once the values are set aside."""

from __future__ import annotations

import pytest

from chat.contract import DecisionReason
from tests.chat.helpers import cited_resources as cited
from tests.chat.helpers import ingest_text
from tests.chat.helpers import traced_turn as ask
from tests.conftest import Tenant
from workspaces.models import DEFAULT_ANSWERABILITY_THRESHOLD

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

RESET = "How do I reset the password?"


@pytest.fixture
def routers(owner: Tenant) -> dict[str, str]:
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.save()
    faq = (
        "This document answers common questions about the Router R1.\n\n"
        "To reset the password of the Router R1, hold the reset button for ten seconds.\n\n"
        "The Router R1 supports up to 32 connected devices."
    )
    manual = (
        "This manual explains how to set up the Router R2.\n\n"
        "The administrator password of the Router R2 is reset by opening the app and choosing "
        "Forgot password.\n\n"
        "The Router R2 supports up to 64 connected devices."
    )
    return {
        "R1": str(ingest_text(owner.workspace, "Router R1 frequently asked questions", faq).id),
        "R2": str(ingest_text(owner.workspace, "Router R2 user manual", manual).id),
    }


def test_differently_worded_answers_for_two_routers_ask_which_one(
    owner: Tenant, routers: dict[str, str]
) -> None:
    assistant, trace, _ = ask(owner, RESET)
    assert trace["decision"] == "clarify" and trace["reason"] == DecisionReason.PARALLEL_CANDIDATES
    [field] = assistant["response"]["form"]["fields"]
    assert {choice["value"] for choice in field["choices"]} == set(routers.values())


def test_a_named_router_is_answered_and_an_uncovered_one_is_not(
    owner: Tenant, routers: dict[str, str]
) -> None:
    assistant, trace, _ = ask(owner, "How do I reset the password of the R2?")
    assert trace["decision"] == "answer" and cited(assistant) == {routers["R2"]}
    assistant, trace, _ = ask(owner, "How do I reset the password of the Netgear N900?")
    assert trace["decision"] == "no_answer" and trace["reason"] == DecisionReason.UNCOVERED_SUBJECT
    assert not cited(assistant)


@pytest.mark.parametrize("router", ["R1", "R2"])
def test_after_choosing_a_router_a_follow_up_cites_it_only(
    owner: Tenant, routers: dict[str, str], router: str
) -> None:
    form, _, session = ask(owner, RESET)
    [field] = form["response"]["form"]["fields"]
    values = [choice["value"] for choice in field["choices"]]
    chosen, _, _ = ask(owner, str(values.index(routers[router]) + 1), session)
    assert cited(chosen) == {routers[router]}
    follow, trace, _ = ask(owner, "And how many devices can connect?", session)
    assert cited(follow) == {routers[router]}, follow
    assert trace["subject"] == {"resource_id": routers[router], "from": "previous_answer"}


def test_data_sheets_told_apart_by_a_number_ask_which_one(owner: Tenant) -> None:
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.save()
    ids = {
        str(ingest_text(owner.workspace, f"Aero {size} data sheet", text).id)
        for size, text in (
            (
                14,
                "The Aero 14 is a lightweight laptop for students and travellers.\n\n"
                "The Aero 14 weighs 1.2 kg.\n\nOn a full charge the Aero 14 lasts 12 hours.",
            ),
            (
                16,
                "The Aero 16 is a lightweight laptop for students and travellers.\n\n"
                "At 1.7 kg, the Aero 16 is easy to carry.\n\n"
                "The battery of the Aero 16 runs for 9 hours of video playback.",
            ),
        )
    }
    assistant, trace, _ = ask(owner, "How much does the laptop weigh?")
    assert trace["decision"] == "clarify", trace
    [field] = assistant["response"]["form"]["fields"]
    assert {choice["value"] for choice in field["choices"]} == ids
