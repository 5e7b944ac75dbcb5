"""What an evaluation keeps of an end user's words goes with their messages:
chat deletes the messages (retention, end-user data deletion) and never
names the evaluation tables; the database's cascade deletes the test items
built from those replies and those items' results (docs/evaluation.md)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from chat.transcripts.retention import sessions_expired_delete
from evaluations import items, promote, runs
from evaluations.models import EvaluationResult, EvaluationRun, TestItem
from tests.conftest import Tenant
from tests.transcripts.factories import answer_response, conversation

pytestmark = pytest.mark.django_db


def test_the_retention_sweep_deletes_the_items_and_results_built_from_expired_replies(owner: Tenant) -> None:
    owner.workspace.retention_days = 30
    owner.workspace.save(update_fields=["retention_days"])
    long_ago = timezone.now() - dt.timedelta(days=31)
    _, expired = conversation(
        owner.workspace,
        external_user_id="alice",
        turns=[("How long do refunds take?", answer_response(("Thirty days.", None)))],
        updated_at=long_ago,
    )
    test_set = items.test_set_create(workspace=owner.workspace, name="Nightly")
    promoted = promote.item_from_reply(
        test_set=test_set, reply=expired[1], expected_resource_ids=[], expected_outcome="no_answer"
    )
    written = items.item_create(test_set=test_set, data={"question": "What is the capital of Peru?"})
    run = runs.run_execute(runs.run_create(test_set=test_set).id)
    assert run is not None and run.status == "completed"
    results = EvaluationResult.objects.filter(run=run)
    assert [r.source_message_id for r in results] == [expired[1].id, None]

    assert sessions_expired_delete() == 1
    assert list(TestItem.objects.filter(test_set=test_set)) == [written]
    assert not TestItem.objects.filter(id=promoted.id).exists()
    assert [r.item_id for r in EvaluationResult.objects.filter(run=run)] == [written.id]
    # The run and its figures stay.
    assert EvaluationRun.objects.get(id=run.id).metrics == run.metrics
