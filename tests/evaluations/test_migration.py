"""The evaluation tables moved from chat to their own app without losing a
row or a grant: a database holding test sets, items, runs and results as
chat's 0011 left them is migrated to today's, as Django's own migration
tests do it (``MigrationExecutor``), and everything is found again: the
rows, their links, a staff account's permission on test sets."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.apps.registry import Apps
from django.contrib.auth.models import Permission, User
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from chat.models import Message
from evaluations.models import EvaluationResult, EvaluationRun, TestItem, TestSet
from tests.factories import WorkspaceFactory

# chat's last migration with the tables in its state, and no evaluations app yet.
CHAT_BEFORE = ("chat", "0011_evaluation_judge")
BEFORE = [CHAT_BEFORE, ("evaluations", None)]
MOVED = ("testset", "testitem", "evaluationrun", "evaluationresult")


@pytest.fixture
def before_the_move(transactional_db: None) -> Iterator[Apps]:
    """The database migrated back to before the move (the models as chat
    had them); migrated forward again to every app's latest afterwards."""
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    executor.migrate(BEFORE)
    try:
        yield MigrationExecutor(connection).loader.project_state(CHAT_BEFORE).apps
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(latest)
        ContentType.objects.clear_cache()


def _granted(codename: str) -> User:
    """A staff account holding chat's permission ``codename`` on test sets, as before the move."""
    kind, _ = ContentType.objects.get_or_create(app_label="chat", model="testset")
    granted, _ = Permission.objects.get_or_create(
        content_type=kind, codename=codename, defaults={"name": f"Can {codename}"}
    )
    user = User.objects.create_user("curator", password="a-long-test-password-91", is_staff=True)
    user.user_permissions.add(granted)
    return user


def _chat_model(old: Apps, name: str) -> Any:
    """One of chat's models as it was before the move (not today's: none is chat's now)."""
    return old.get_model("chat", name)


def _rows(old: Apps) -> dict[str, Any]:
    """A test set with two items (one built from a reply), a run with a result for each."""
    workspace = WorkspaceFactory.create()
    # The reply as chat's tables had it then (today's model has columns added since).
    session = _chat_model(old, "Session").objects.create(
        workspace_id=workspace.id, external_user_id="alice", title="A conversation"
    )
    reply = _chat_model(old, "Message").objects.create(
        session=session, sequence=1, role="assistant", content="Thirty days."
    )
    test_set = _chat_model(old, "TestSet").objects.create(workspace_id=workspace.id, name="Nightly")
    item = _chat_model(old, "TestItem")
    written = item.objects.create(test_set=test_set, position=0, question="Written by hand?")
    promoted = item.objects.create(
        test_set=test_set, position=1, question="From a reply?", source_message_id=reply.id
    )
    run = _chat_model(old, "EvaluationRun").objects.create(
        test_set=test_set, model="extractive", status="completed", done=2, total=2, metrics={"mrr": 0.5}
    )
    result = _chat_model(old, "EvaluationResult")
    for position, each in enumerate((written, promoted)):
        result.objects.create(
            run=run,
            item=each,
            position=position,
            question=each.question,
            outcome="answered",
            latency_ms=10 + position,
            outcome_right=True,
            judge_verdict="correct",
        )
    return {"set": test_set.id, "items": [written.id, promoted.id], "run": run.id, "reply": reply.id}


def test_every_row_and_grant_is_found_after_the_move(before_the_move: Apps) -> None:
    user = _granted("view_testset")
    made = _rows(before_the_move)
    tables = connection.introspection.table_names()
    assert "chat_testset" in tables and "evaluations_testset" not in tables
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    tables = connection.introspection.table_names()
    assert {f"evaluations_{name}" for name in MOVED} <= set(tables)
    assert not {f"chat_{name}" for name in MOVED} & set(tables)
    test_set = TestSet.objects.get(id=made["set"])
    assert test_set.name == "Nightly"
    assert [i.id for i in test_set.items.all()] == made["items"]
    run = EvaluationRun.objects.get(id=made["run"], test_set=test_set)
    assert (run.status, run.metrics) == ("completed", {"mrr": 0.5})
    results = list(EvaluationResult.objects.filter(run=run))
    assert [(r.item_id, r.latency_ms, r.judge_verdict) for r in results] == [
        (made["items"][0], 10, "correct"),
        (made["items"][1], 11, "correct"),
    ]
    # A result keeps its item's source reply (evaluations' 0002), so it is
    # deleted with the end user's messages.
    assert [r.source_message_id for r in results] == [None, made["reply"]]
    assert TestItem.objects.get(id=made["items"][1]).source_message_id == made["reply"]
    # The content type moved with its grants: the staff account still may.
    assert not ContentType.objects.filter(app_label="chat", model__in=MOVED).exists()
    assert User.objects.get(id=user.id).has_perm("evaluations.view_testset")
    Message.objects.filter(id=made["reply"]).delete()
    assert EvaluationResult.objects.filter(run=run).count() == 1
    assert not TestItem.objects.filter(id=made["items"][1]).exists()


def test_the_move_is_undone_as_well(before_the_move: Apps) -> None:
    """Migrating back (a rolled-back release) finds the rows under chat again."""
    made = _rows(before_the_move)
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = MigrationExecutor(connection).loader.project_state(CHAT_BEFORE).apps
    assert _chat_model(old, "TestSet").objects.get(id=made["set"]).name == "Nightly"
    assert _chat_model(old, "EvaluationResult").objects.filter(run_id=made["run"]).count() == 2
    assert set(ContentType.objects.filter(model__in=MOVED).values_list("app_label", flat=True)) == {"chat"}
