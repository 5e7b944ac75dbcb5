"""Each item of an evaluation run says why its reply is no answer or a form
(``reason``, a code of ``chat.contract.DecisionReason``, with
``reason_figures``), as the prompt trace does; and an item asks back only
when its reply was stored as a form, never by a question mark, Persian
"؟" included (docs/evaluation.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evaluations import items, runs
from evaluations.models import EvaluationResult
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant
from workspaces.models import DEFAULT_ANSWERABILITY_THRESHOLD

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

PRODUCTS = (("Kettle K1", "two-year"), ("Toaster T2", "one-year"), ("Mixer M5", "three-year"))
LINES = [
    {"question": "How long is the Kettle K1 warranty?"},
    {"question": "How long is the warranty?", "expected_outcome": "ask_back"},
    {"question": "How long is the dishwasher warranty?", "expected_outcome": "no_answer"},
    {"question": "What is the capital of Australia?", "expected_outcome": "no_answer"},
    # A Persian question ends with "؟": its no answer is no ask-back.
    {"question": "پایتخت استرالیا کدام شهر است؟", "expected_outcome": "ask_back"},
]


@pytest.fixture
def results(owner: Tenant) -> list[dict[str, Any]]:
    """The run's items as ``GET …/evaluations/{id}/items/`` lists them."""
    workspace = owner.workspace
    workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    workspace.save()
    for name, warranty in PRODUCTS:
        ingest_text(
            workspace, name, f"The {name} comes with a {warranty} warranty from the date of purchase."
        )
    test_set = items.test_set_create(workspace=workspace, name="Reasons")
    body = "\n".join(json.dumps(line) for line in LINES).encode()
    items.items_import(test_set=test_set, body=body, csv_format=False)
    run = runs.run_execute(runs.run_create(test_set=test_set).id)
    assert run is not None and run.status == "completed", run and run.error
    response = owner.client().get(f"/api/v1/workspaces/{workspace.id}/evaluations/{run.id}/items/")
    assert response.status_code == 200, response.json()
    listed: list[dict[str, Any]] = response.json()["data"]["items"]
    return listed


def test_each_item_says_why_it_is_no_answer_or_a_form(results: list[dict[str, Any]]) -> None:
    answered, asked, uncovered, below, persian = results
    assert answered["outcome"] == "answered" and answered["reason"] is None
    assert answered["reason_figures"] == {}
    assert asked["outcome"] == "asked" and asked["reason"] == "parallel_candidates"
    assert asked["reason_figures"]["candidates"] == len(PRODUCTS) == len(asked["reason_figures"]["scores"])
    assert uncovered["outcome"] == "abstained" and uncovered["reason"] == "uncovered_subject"
    assert uncovered["reason_figures"]["subject_words"] == ["dishwasher"]
    assert below["outcome"] == "abstained" and below["reason"] == "below_threshold"
    figures = below["reason_figures"]
    assert figures["answerability"] < figures["threshold"] == DEFAULT_ANSWERABILITY_THRESHOLD
    assert persian["reason"] == "below_threshold"


def test_a_persian_question_mark_is_no_ask_back(results: list[dict[str, Any]]) -> None:
    persian = results[4]
    assert persian["question"].endswith("؟")
    assert persian["outcome"] == "abstained" and persian["outcome_right"] is False
    stored = EvaluationResult.objects.get(position=4)
    assert stored.reason == "below_threshold" and stored.outcome == "abstained"
