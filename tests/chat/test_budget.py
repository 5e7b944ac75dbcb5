"""Every prompt fits its model: context_length - max_tokens - margin, filled
with instructions, the question, passages (lowest-ranked dropped first),
then history from the newest turn back."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from chat.backends.base import ChatMessage
from chat.backends.scripted import ScriptedBackend
from chat.models import Message, Session
from chat.prompting import HistoryTurn, PromptInputs, fit_messages
from retrieval.search import ScoredPassage
from tests.chat.helpers import ingest_text, stored_session
from tests.conftest import Tenant

pytestmark = pytest.mark.django_db


def chars(messages: list[ChatMessage]) -> int:
    """A tokenizer of one token per character (plus a few per message)."""
    return sum(len(m["content"]) + 4 for m in messages)


def passage(rank: int, text: str) -> ScoredPassage:
    return ScoredPassage(uuid.uuid4(), uuid.uuid4(), f"Doc {rank}", text, 1.0 / rank, rank, 0, None)


def fit(budget: int | None, *, history: list[HistoryTurn], passages: list[ScoredPassage]) -> Any:
    return fit_messages(
        PromptInputs(
            workspace_prompt="Be brief.",
            history=history,
            question="When are claims filed?",
            passages=passages,
            grounded=True,
        ),
        count=chars,
        budget=budget,
    )


def test_a_prompt_that_fits_is_left_whole() -> None:
    history = [HistoryTurn("q1", "a1")]
    passages = [passage(1, "one"), passage(2, "two")]
    fitted = fit(100_000, history=history, passages=passages)
    assert fitted.passages == passages and fitted.dropped_passages == [] and fitted.dropped_turns == []
    assert len(fitted.messages) == 4
    assert fit(None, history=history, passages=passages).messages == fitted.messages


def test_history_goes_oldest_first_then_passages_lowest_ranked_first() -> None:
    history = [HistoryTurn(f"question {i} " + "x" * 300, f"answer {i}") for i in range(5)]
    passages = [passage(rank, f"passage {rank} " + "y" * 200) for rank in range(1, 6)]
    whole = chars(fit(None, history=history, passages=passages).messages)
    # Room for every passage and two turns (the per-piece estimate may give up one more).
    fitted = fit(whole - 3 * 330, history=history, passages=passages)
    assert fitted.passages == passages
    assert fitted.dropped_turns in (history[:3], history[:4])
    kept = [m["content"].split(" ")[1] for m in fitted.messages[1:-1:2]]
    assert kept == [str(i) for i in range(len(fitted.dropped_turns), 5)]  # the newest, contiguous
    assert fitted.prompt_tokens is not None and fitted.prompt_tokens <= fitted.budget
    # Tighter: no history left, and the lowest-ranked passages go.
    three = chars(fit(None, history=[], passages=passages[:3]).messages)
    fitted = fit(three + 60, history=history, passages=passages)
    assert fitted.dropped_turns == history
    assert fitted.passages == passages[:3] and fitted.dropped_passages == passages[3:]


def test_the_best_passage_alone_too_long_is_cut_not_dropped() -> None:
    passages = [passage(1, "z" * 5000), passage(2, "short")]
    bare = chars(fit(None, history=[], passages=[]).messages)
    fitted = fit(bare + 1000, history=[], passages=passages)
    assert [p.passage_id for p in fitted.passages] == [passages[0].passage_id]
    assert fitted.truncated_passage_id == passages[0].passage_id
    assert 0 < len(fitted.passages[0].text) < 1000 and fitted.passages[0].text.endswith("…")
    assert fitted.dropped_passages == [passages[1]]
    assert chars(fitted.messages) <= bare + 1000


def chat(tenant: Tenant, **body: Any) -> Any:
    return tenant.client("admin").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/chat/",
        {"external_user_id": "u1", **body},
        format="json",
    )


def _long_session(tenant: Tenant, turns: int, chars_per_turn: int) -> Session:
    """A session whose stored history is ``turns`` turns of ``chars_per_turn`` characters."""
    return stored_session(tenant.workspace, turns=turns, filler="w" * chars_per_turn)


def test_twenty_turns_of_thirty_thousand_characters_still_answer(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    scripted.window = 30_000  # tokens; the estimate counts about 3 characters a token
    session = _long_session(owner, 20, 30_000)
    response = chat(owner, message="And now?", session_id=str(session.id), include_prompt_trace=True)
    assert response.status_code == 200, response.json()
    trace = response.json()["data"]["prompt_trace"]
    budget = trace["budget"]
    assert budget["context_length"] == 30_000
    assert budget["prompt_tokens"] <= budget["prompt_budget"] == 30_000 - scripted.max_tokens - 32
    # Two 10,000-token turns fit beside the question; the 18 oldest do not.
    kept = [m["content"].split(" ")[1] for m in trace["messages"][1:-1:2]]
    assert kept == ["18", "19"]
    dropped = trace["dropped"]["history"]
    assert len(dropped) == 18
    first_turn = Message.objects.get(session=session, sequence=0)
    assert dropped[0]["user_message_id"] == str(first_turn.id)
    assert scripted.calls[-1]["messages"] == trace["messages"]


def test_a_window_too_small_for_any_history_still_answers(owner: Tenant, scripted: ScriptedBackend) -> None:
    scripted.window = 3_000
    session = _long_session(owner, 3, 30_000)
    response = chat(owner, message="Short?", session_id=str(session.id), include_prompt_trace=True)
    assert response.status_code == 200
    trace = response.json()["data"]["prompt_trace"]
    assert [m["role"] for m in trace["messages"]] == ["system", "user"]
    assert len(trace["dropped"]["history"]) == 3


def test_passages_that_do_not_fit_are_dropped_lowest_ranked_first(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    for index in range(8):
        ingest_text(owner.workspace, f"Policy {index}", f"Claims rule {index}: " + "detail " * 300)
    scripted.window = 3_000
    data = chat(owner, message="What are the claims rules?", include_prompt_trace=True).json()["data"]
    trace = data["prompt_trace"]
    kept = [p["score"] for p in trace["passages"]]
    dropped = [p["score"] for p in trace["dropped"]["passages"]]
    assert kept and dropped and len(kept) + len(dropped) == 5
    assert min(kept) >= max(dropped)
    assert trace["budget"]["prompt_tokens"] <= trace["budget"]["prompt_budget"]


def test_a_message_longer_than_the_window_is_400_before_anything_is_stored(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    scripted.window = 2_000
    response = chat(owner, message="x" * 20_000)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert "too long" in error["fields"]["message"][0]
    assert not Session.objects.exists() and not Message.objects.exists()
    assert scripted.calls == []
