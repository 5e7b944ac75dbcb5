"""The evaluation's optional judge (evaluations/judge.py): a generative
model's verdict on each reply, stored apart from the deterministic scores.
Real PostgreSQL, embedding model and chat turn (extractive engine); the
judge is a stand-in double where its failures are the point, and the real
vLLM server of the test session otherwise."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from pytest_django import Settings

from chat import backends
from chat.backends import BaseGenerativeBackend
from chat.backends.base import Generation, GenerationRequest
from daneshyar.exceptions import LLMUnavailable
from evaluations import items, judge, runs
from evaluations.models import TestSet
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant
from tests.staff import make_staff
from tests.vllm_server import VllmServer

pytestmark = pytest.mark.django_db

KETTLE = "The kettle holds 1.7 litres of water. A full kettle boils in about three minutes."


class ScriptedJudge(BaseGenerativeBackend):
    """Stands in for a generative model asked to judge a reply: it answers
    by the question it reads — a verdict in the schema, text that is not
    the JSON asked for, or a server that is down."""

    backend_name = "scripted-judge"

    def __init__(self) -> None:
        super().__init__("judge-double")
        self.prompts: list[str] = []

    def _generate(self, request: GenerationRequest) -> Generation:
        prompt = request.messages[-1]["content"]
        self.prompts.append(prompt)
        assert request.schema == judge.JUDGE_SCHEMA
        if "litres" in prompt:
            return Generation(text=json.dumps({"verdict": "correct", "reason": "It says 1.7 litres."}))
        if "boil" in prompt:
            return Generation(text="I think it is fine")
        raise LLMUnavailable("The judge's server is down.")


def _test_set(owner: Tenant) -> TestSet:
    ingest_text(owner.workspace, "Kettle manual", KETTLE)
    test_set = items.test_set_create(workspace=owner.workspace, name="Judged")
    lines = [
        {"question": "How many litres does the kettle hold?", "expected_answer": "1.7 litres"},
        {"question": "How long does a full kettle take to boil?"},
        {"question": "What is the capital of Australia?", "expected_outcome": "no_answer"},
    ]
    items.items_import(
        test_set=test_set, body="\n".join(json.dumps(line) for line in lines).encode(), csv_format=False
    )
    return test_set


@pytest.fixture
def scripted(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedJudge]:
    double = ScriptedJudge()
    settings.GENERATION_MODELS = [
        *settings.GENERATION_MODELS,
        {"id": "judge-double", "backend": "openai", "default": False, "context_length": None},
    ]
    monkeypatch.setattr(backends, "_instances", {"judge-double": double})
    yield double


def test_verdicts_are_kept_apart_and_a_failing_judge_leaves_the_item_unjudged(
    owner: Tenant, scripted: ScriptedJudge
) -> None:
    test_set = _test_set(owner)
    run = runs.run_execute(runs.run_create(test_set=test_set, judge_model="judge-double").id)
    assert run is not None and run.status == "completed", run and run.error
    assert run.settings_snapshot["judge_model"] == "judge-double"
    results = list(run.results.order_by("position"))
    assert [r.judge_verdict for r in results] == ["correct", "", ""]
    assert results[1].judge_reason == "The judge's reply was not the JSON asked for."
    assert results[2].judge_reason.startswith("[llm_unavailable]")
    # The judge read the question, the expected answer (or the no-answer
    # expectation) and the reply.
    assert "Expected answer: 1.7 litres" in scripted.prompts[0]
    assert "Reply: " in scripted.prompts[0] and "1.7 litres of water" in scripted.prompts[0]
    assert "the reply should say so" in scripted.prompts[2]
    assert run.metrics is not None
    assert run.metrics["judge"] == {
        "model": "judge-double",
        "kind": "a generative model's opinion, not a deterministic metric",
        "judged": 1,
        "unjudged": 2,
        "correct": 1.0,
        "partly_correct": 0.0,
        "incorrect": 0.0,
    }
    # The deterministic scores do not depend on it.
    assert [r.outcome_right for r in results] == [True, True, True]
    detail = owner.client().get(f"/api/v1/workspaces/{owner.workspace.id}/evaluations/{run.id}/items/")
    shown = detail.json()["data"]["items"]
    assert shown[0]["judge_verdict"] == "correct" and shown[0]["judge_reason"] == "It says 1.7 litres."
    # The console's run page labels the verdicts as a model's opinion.
    curator = make_staff("curator", organization=owner.organization)
    page = curator.client.get(f"/admin/console/{owner.workspace.id}/evaluations/{run.id}/").content.decode()
    assert "Judged by judge-double (a model&#x27;s opinion)" in page
    assert 'data-judge="correct"' in page and "not judged" in page


def test_a_judge_must_be_a_generative_model(owner: Tenant) -> None:
    test_set = _test_set(owner)
    path = f"/api/v1/workspaces/{owner.workspace.id}/evaluations/"
    for model in ("extractive", "no-such-model", ""):
        response = owner.client().post(
            path, {"test_set_id": str(test_set.id), "judge_model": model}, format="json"
        )
        assert response.status_code == 400, response.json()
        assert "judge_model" in response.json()["error"]["fields"]


@pytest.mark.slow
def test_a_judge_through_the_real_vllm_server(
    owner: Tenant, settings: Settings, vllm_server: VllmServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SmolLM2 on vLLM judges each reply within the schema (xgrammar): a
    verdict of the three, or, if the server fails, none with the reason."""
    settings.GENERATION_MODELS = [
        *settings.GENERATION_MODELS,
        {"id": vllm_server.model, "backend": "openai", "default": False, "context_length": None},
    ]
    settings.OPENAI_BASE_URL = vllm_server.base_url
    settings.OPENAI_API_KEY = vllm_server.api_key
    settings.OPENAI_TIMEOUT_SECONDS = 180.0
    monkeypatch.setattr(backends, "_instances", {})
    test_set = _test_set(owner)
    run = runs.run_execute(runs.run_create(test_set=test_set, judge_model=vllm_server.model).id)
    assert run is not None and run.status == "completed", run and run.error
    results = list(run.results.order_by("position"))
    for result in results:
        assert result.judge_verdict in judge.VERDICTS, (result.judge_verdict, result.judge_reason)
    assert run.metrics is not None and run.metrics["judge"]["model"] == vllm_server.model
    assert run.metrics["judge"]["judged"] == 3
