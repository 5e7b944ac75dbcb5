"""Evaluation runs through the chat turn: a small workspace (real documents,
the real embedding model, the extractive engine), the metrics checked by
hand, the comparison of two runs, and ``manage.py evaluate`` against a
baseline (docs/evaluation.md)."""

from __future__ import annotations

import json
import math
import time
from io import StringIO
from types import SimpleNamespace
from typing import Any

import pytest
from celery.worker import WorkController
from django.core.management import CommandError, call_command

from chat.models import Session
from evaluations import items, metrics, runs
from evaluations.models import EvaluationRun, TestSet
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant
from workspaces.models import DEFAULT_ANSWERABILITY_THRESHOLD

pytestmark = pytest.mark.django_db

DOCUMENTS = {
    "kettle": (
        "Kettle manual",
        "The kettle holds 1.7 litres of water. A full kettle boils in about three minutes. "
        "The kettle switches itself off when the water boils.",
    ),
    "eggs": (
        "Egg guide",
        "Boil eggs for about seven minutes for a firm yolk. Soft eggs take about four minutes in "
        "boiling water. Cool the eggs in cold water afterwards.",
    ),
    "holiday": (
        "Holiday policy",
        "Employees receive 28 days of paid holiday per year. Holiday requests are approved by the "
        "team lead. Unused holiday days expire at the end of March.",
    ),
}


@pytest.fixture
def evaluated(owner: Tenant) -> tuple[Tenant, TestSet, dict[str, str]]:
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.save()
    ids = {key: str(ingest_text(owner.workspace, *doc).id) for key, doc in DOCUMENTS.items()}
    test_set = items.test_set_create(workspace=owner.workspace, name="Small")
    lines = [
        {"question": "When do unused holiday days expire?", "expected_resource_ids": [ids["holiday"]]},
        {"question": "How many litres does the kettle hold?", "expected_resource_ids": [ids["kettle"]]},
        {"question": "How long should I boil eggs for a firm yolk?", "expected_resource_ids": [ids["eggs"]]},
        {"question": "What is the capital of Australia?", "expected_outcome": "no_answer"},
    ]
    body = "\n".join(json.dumps(line) for line in lines).encode()
    items.items_import(test_set=test_set, body=body, csv_format=False)
    return owner, test_set, ids


def _base(tenant: Tenant) -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/evaluations/"


def _start(tenant: Tenant, test_set: TestSet, django_capture_on_commit_callbacks: Any) -> EvaluationRun:
    """POST …/evaluations/ (202, the task queued on commit), then the task's work, here."""
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = tenant.client().post(_base(tenant), {"test_set_id": str(test_set.id)}, format="json")
    assert response.status_code == 202, response.json()
    data = response.json()["data"]
    assert data["status"] == "pending" and data["progress"] == {"done": 0, "total": 4}
    assert len(queued) == 1
    run = runs.run_execute(data["id"])
    assert run is not None and run.status == "completed", run and run.error
    return run


def test_a_run_measures_the_workspace(
    evaluated: tuple[Tenant, TestSet, dict[str, str]], django_capture_on_commit_callbacks: Any
) -> None:
    owner, test_set, ids = evaluated
    run = _start(owner, test_set, django_capture_on_commit_callbacks)
    detail = owner.client().get(f"{_base(owner)}{run.id}/").json()["data"]
    assert detail["status"] == "completed" and detail["progress"] == {"done": 4, "total": 4}
    assert detail["settings"]["model"] == "extractive"
    assert detail["settings"]["answerability_threshold"] == DEFAULT_ANSWERABILITY_THRESHOLD
    assert detail["settings"]["top_k"] == detail["settings"]["k"] == owner.workspace.top_k
    assert detail["settings"]["embedding_model"] == owner.workspace.embedding_model
    results = owner.client().get(f"{_base(owner)}{run.id}/items/").json()["data"]["items"]
    assert [r["outcome"] for r in results] == ["answered", "answered", "answered", "abstained"]
    expected = [ids["holiday"], ids["kettle"], ids["eggs"]]
    for result, doc in zip(results, expected, strict=False):
        assert result["first_cited_resource_id"] == doc and result["first_citation_expected"] is True
        assert result["retrieved_resource_ids"][0] == doc
        assert result["recall"] == 1.0 and result["reciprocal_rank"] == 1.0
    assert results[3]["recall"] is None and results[3]["outcome_right"] is True
    # By hand: every expected document ranked first and cited; every outcome right.
    metrics = detail["metrics"]
    assert metrics["items"] == 4 and metrics["items_with_expected_documents"] == 3
    assert metrics["recall_at_k"] == metrics["ndcg_at_k"] == metrics["mrr"] == 1.0
    assert metrics["first_citation_expected"] == 1.0 and metrics["outcome_right"] == 1.0
    assert metrics["k"] == owner.workspace.top_k and metrics["recall_at"] == {"1": 1.0, "3": 1.0, "5": 1.0}
    assert metrics["by_expected_outcome"] == {
        "answer": {"items": 3, "outcome_right": 1.0},
        "no_answer": {"items": 1, "outcome_right": 1.0},
    }
    latencies = sorted(r["latency_ms"] for r in results)
    assert metrics["latency_p50_ms"] == latencies[1] and metrics["latency_p95_ms"] == latencies[3]
    # The run's turns were stored under its own end user, and are gone.
    assert not Session.objects.filter(workspace=owner.workspace).exists()


def test_the_comparison_flags_what_got_worse(
    evaluated: tuple[Tenant, TestSet, dict[str, str]], django_capture_on_commit_callbacks: Any
) -> None:
    owner, test_set, _ = evaluated
    baseline = _start(owner, test_set, django_capture_on_commit_callbacks)
    owner.workspace.answerability_threshold = 0.9
    owner.workspace.save()
    worse = _start(owner, test_set, django_capture_on_commit_callbacks)
    assert worse.settings_snapshot["answerability_threshold"] == 0.9
    response = owner.client().get(f"{_base(owner)}{worse.id}/compare/{baseline.id}/")
    assert response.status_code == 200, response.json()
    compared = response.json()["data"]
    assert compared["counts"]["worse"] >= 1 and compared["counts"]["better"] == 0
    assert "outcome_right" in compared["regressions"]
    assert compared["deltas"]["outcome_right"] < -0.02
    verdicts = {i["question"]: i["verdict"] for i in compared["items"]}
    assert verdicts["What is the capital of Australia?"] == "same"
    flipped = owner.client().get(f"{_base(owner)}{baseline.id}/compare/{worse.id}/").json()["data"]
    assert flipped["counts"]["better"] == compared["counts"]["worse"] and flipped["regressions"] == []
    assert owner.client().get(f"{_base(owner)}{worse.id}/compare/{baseline.id}/?margin=2").status_code == 400


def test_the_command_exits_non_zero_on_a_regression_and_zero_once_restored(
    evaluated: tuple[Tenant, TestSet, dict[str, str]],
) -> None:
    owner, test_set, _ = evaluated
    out = StringIO()
    call_command("evaluate", str(test_set.id), stdout=out)
    baseline = json.loads(out.getvalue())["run_id"]
    owner.workspace.answerability_threshold = 0.9
    owner.workspace.save()
    with pytest.raises(CommandError) as raised:
        call_command(
            "evaluate", str(test_set.id), "--baseline", baseline, "--margin", "0.02", stdout=StringIO()
        )
    assert raised.value.returncode == 1 and "outcome_right" in str(raised.value)
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.save()
    out = StringIO()
    call_command("evaluate", str(test_set.id), "--baseline", baseline, stdout=out)
    assert json.loads(out.getvalue())["regressions"] == []
    with pytest.raises(CommandError) as unusable:
        call_command("evaluate", "not-an-id", stdout=StringIO())
    assert unusable.value.returncode == 2


def test_bad_starts_and_another_organizations_runs(
    evaluated: tuple[Tenant, TestSet, dict[str, str]], outsider: Tenant
) -> None:
    owner, test_set, _ = evaluated
    client = owner.client()
    for body in (
        {},
        {"test_set_id": "nope"},
        {"test_set_id": str(test_set.id), "model": "no-such-model"},
        {"test_set_id": str(test_set.id), "k": 0},
        {"test_set_id": str(test_set.id), "k": 51},
        {"test_set_id": str(test_set.id), "k": "five"},
    ):
        response = client.post(_base(owner), body, format="json")
        assert response.status_code == 400 and response.json()["error"]["code"] == "validation_error"
    empty = items.test_set_create(workspace=owner.workspace, name="Empty")
    assert client.post(_base(owner), {"test_set_id": str(empty.id)}, format="json").status_code == 400
    theirs = items.test_set_create(workspace=outsider.workspace, name="Theirs")
    items.item_create(test_set=theirs, data={"question": "Theirs?"})
    assert client.post(_base(owner), {"test_set_id": str(theirs.id)}, format="json").status_code == 404
    foreign = runs.run_create(test_set=theirs)
    mine = runs.run_create(test_set=test_set)
    for path in (f"{foreign.id}/", f"{foreign.id}/items/", f"{mine.id}/compare/{foreign.id}/"):
        response = client.get(f"{_base(owner)}{path}")
        assert response.status_code == 404 and str(foreign.id) not in response.content.decode()
    assert str(foreign.id) not in client.get(_base(owner)).content.decode()
    # A pending run is not compared.
    assert client.get(f"{_base(owner)}{mine.id}/compare/{mine.id}/").status_code == 400
    assert owner.client("chat").get(_base(owner)).status_code == 403


@pytest.mark.django_db(transaction=True)
def test_the_worker_runs_a_started_run_to_its_end(owner: Tenant, celery_worker: WorkController) -> None:
    """End to end: POST …/evaluations/ queues the task on commit, a real
    worker runs it, progress reaches the total."""
    doc = ingest_text(owner.workspace, *DOCUMENTS["holiday"])
    test_set = items.test_set_create(workspace=owner.workspace, name="Worker")
    items.item_create(
        test_set=test_set,
        data={"question": "When do unused holiday days expire?", "expected_resource_ids": [doc.id]},
    )
    response = owner.client().post(_base(owner), {"test_set_id": str(test_set.id)}, format="json")
    assert response.status_code == 202
    url = f"{_base(owner)}{response.json()['data']['id']}/"
    deadline = time.monotonic() + 120
    while (data := owner.client().get(url).json()["data"])["status"] in ("pending", "running"):
        assert time.monotonic() < deadline, data
        time.sleep(0.2)
    assert data["status"] == "completed" and data["progress"] == {"done": 1, "total": 1}
    assert data["metrics"]["recall_at_k"] == 1.0


def test_no_run_is_left_pending_or_running_for_ever(
    evaluated: tuple[Tenant, TestSet, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pending run whose task was lost is queued again; a running run whose
    worker stopped is failed, its sessions deleted; a fresh one of each is left alone."""
    import datetime as dt
    from unittest import mock

    from django.utils import timezone

    _, test_set, _ = evaluated
    lost = runs.run_create(test_set=test_set)
    fresh = runs.run_create(test_set=test_set)
    stopped = runs.run_create(test_set=test_set)
    working = runs.run_create(test_set=test_set)
    long_ago = timezone.now() - dt.timedelta(hours=1)
    EvaluationRun.objects.filter(id=lost.id).update(created_at=long_ago)
    EvaluationRun.objects.filter(id=stopped.id).update(status="running", heartbeat_at=long_ago)
    EvaluationRun.objects.filter(id=working.id).update(status="running", heartbeat_at=timezone.now())
    Session.objects.create(workspace=test_set.workspace, external_user_id=runs.evaluation_user_id(stopped))
    with mock.patch.object(runs, "current_app") as app:
        assert runs.runs_stale_sweep() == (1, 1)
    app.send_task.assert_called_once_with(runs.RUN_TASK, args=[str(lost.id)])
    statuses = dict(EvaluationRun.objects.values_list("id", "status"))
    assert statuses[fresh.id] == "pending" and statuses[working.id] == "running"
    stopped.refresh_from_db()
    assert stopped.status == "failed" and "worker" in stopped.error and stopped.finished_at is not None
    assert not Session.objects.filter(external_user_id=runs.evaluation_user_id(stopped)).exists()


def test_the_reply_language_is_the_questions(owner: Tenant) -> None:
    """A German question answered from a German document, a Persian one the
    documents do not answer (the Persian no-answer reply), an English one:
    each reply is in its question's language."""
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.save()
    kettle = ingest_text(
        owner.workspace,
        "Wasserkocher",
        "Der Wasserkocher fasst 1,7 Liter Wasser und schaltet sich aus, wenn das Wasser kocht.",
    )
    ingest_text(owner.workspace, *DOCUMENTS["holiday"])
    test_set = items.test_set_create(workspace=owner.workspace, name="Languages")
    for data in (
        {"question": "Wie viel Wasser fasst der Wasserkocher?", "expected_resource_ids": [kettle.id]},
        {"question": "پایتخت استرالیا کدام شهر است؟", "expected_outcome": "no_answer"},
        {"question": "When do unused holiday days expire?"},
    ):
        items.item_create(test_set=test_set, data=data)
    run = runs.run_execute(runs.run_create(test_set=test_set).id)
    assert run is not None and run.status == "completed", run and run.error
    results = list(run.results.all())
    assert [r.reply_language_right for r in results] == [True, True, True], [r.reply for r in results]
    assert results[1].outcome == "abstained"
    assert run.metrics is not None and run.metrics["reply_language_right"] == 1.0
    # A reply that tells no language (empty, or too short: "Der Wasserkocher
    # fasst 1,7 Liter.") is left out, and a wrong one counts.
    from evaluations.metrics import language_right

    assert language_right(question="Wie spät ist es?", earlier_questions=[], reply="") is None
    assert (
        language_right(question="Wie spät ist es?", earlier_questions=[], reply="Der Wasserkocher.") is None
    )
    assert (
        language_right(
            question="Wie viel Wasser fasst der Wasserkocher?",
            earlier_questions=[],
            reply="The kettle holds 1.7 litres of water.",
        )
        is False
    )


def test_the_metrics_by_hand() -> None:
    """nDCG@k with binary relevance, the first citation of the replies that
    cite, and outcome right per expected outcome: the definitions of
    bench/conversation_quality.py and bench/retrieval_quality.py."""
    assert metrics.ndcg(expected=["a"], retrieved=["a", "b"], k=5) == 1.0
    assert metrics.ndcg(expected=["a"], retrieved=["b", "a"], k=5) == pytest.approx(1 / math.log2(3))
    assert metrics.ndcg(expected=["a", "c"], retrieved=["b", "a"], k=1) == 0.0
    assert metrics.ndcg(expected=["a", "c"], retrieved=["c", "b", "a"], k=5) == pytest.approx(
        (1 + 1 / 2) / (1 + 1 / math.log2(3))
    )

    def scored(expected: list[str], retrieved: list[str], cited: str | None, outcome: str, want: str) -> Any:
        scores = metrics.item_scores(
            expected=expected, retrieved=retrieved, k=2, cited=cited, outcome=outcome, expected_outcome=want
        )
        return SimpleNamespace(
            expected_outcome=want,
            expected_resource_ids=expected,
            retrieved_resource_ids=retrieved,
            latency_ms=10,
            reply_language_right=None,
            **vars(scores),
        )

    results = [
        scored(["a"], ["a", "b"], "a", "answered", "answer"),
        scored(["a"], ["b", "c", "a"], "b", "answered", "answer"),
        scored(["a"], ["b"], None, "abstained", "answer"),  # no citation: not counted as a citation
        scored([], ["b"], None, "abstained", "no_answer"),
        scored([], ["b"], None, "answered", "ask_back"),
    ]
    assert results[2].first_citation_expected is None
    figures = metrics.run_metrics(results, k=2)
    assert figures["items_with_expected_documents"] == 3 and figures["k"] == 2
    assert figures["recall_at_k"] == pytest.approx(round(1 / 3, 4))
    assert figures["recall_at"] == {"1": pytest.approx(round(1 / 3, 4))}
    assert metrics.recall_at(expected=["a", "c"], retrieved=["b", "c", "a"], k=2) == 0.5
    assert figures["first_citation_expected"] == 0.5
    assert figures["mrr"] == pytest.approx(round((1 + 1 / 3 + 0) / 3, 4))
    assert figures["by_expected_outcome"] == {
        "answer": {"items": 3, "outcome_right": pytest.approx(round(2 / 3, 4))},
        "no_answer": {"items": 1, "outcome_right": 1.0},
        "ask_back": {"items": 1, "outcome_right": 0.0},
    }


def test_the_sweep_queues_no_copy_while_a_run_waits_for_a_busy_worker(
    evaluated: tuple[Tenant, TestSet, dict[str, str]],
) -> None:
    """A pending run whose message still waits in the evaluations queue (its
    worker is busy with other runs) is not lost: a copy a minute would pile up."""
    import datetime as dt
    from unittest import mock

    from django.conf import settings
    from django.utils import timezone

    from daneshyar.celery import app as celery_app
    from tests.worker import purge_queue

    _, test_set, _ = evaluated
    waiting = runs.run_create(test_set=test_set)
    EvaluationRun.objects.filter(id=waiting.id).update(created_at=timezone.now() - dt.timedelta(hours=1))
    purge_queue()
    with celery_app.producer_or_acquire() as producer:
        producer.publish({"waiting": True}, routing_key=settings.EVALUATION_QUEUE, declare=[])
    try:
        with mock.patch.object(runs, "current_app") as app:
            assert runs.runs_stale_sweep() == (0, 0)
        app.send_task.assert_not_called()
    finally:
        purge_queue()
