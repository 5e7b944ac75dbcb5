"""Evaluation runs: every item of a test set through the chat turn (the
service's own code path, chat/services/turn), what came back per item, and
the run's metrics.

A run's turns are stored under a reserved end user of their own
(``console:evaluation-<run id>``: never shown by the API, the transcript
export or the dashboard), and deleted when the run ends, so no end user's
data mixes in and none is left behind.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import time
import uuid
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from chat.backends import BaseGenerativeBackend, resolve_model
from chat.message_list import Conversation, conversation_parse
from chat.models import CONSOLE_USER_PREFIX
from chat.services.sessions import user_sessions_delete
from chat.services.turn import TurnRequest, turn_complete, turn_prepare
from daneshyar.api import uuid_or_404
from daneshyar.celery import queue_waiting
from daneshyar.exceptions import ApplicationError, NotFound, ValidationFailed
from evaluations.judge import judge_backend, judge_metrics, reply_judge
from evaluations.metrics import ItemScores, item_scores, language_right, run_metrics
from evaluations.models import EvaluationResult, EvaluationRun, RunStatus, TestItem, TestSet
from evaluations.outcomes import OTHER, first_cited_resource, reply_evaluated_outcome
from workspaces.models import ApiKey, ApiKeyScope, Workspace

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "extractive"
RUN_TASK = "chat.evaluation_run"
# A pending run not started this long after it was made (its task lost: the
# broker was down) is queued again; a running one whose worker has not
# finished an item for this long (the worker was killed) is failed.
PENDING_REQUEUE_SECONDS = 120
RUNNING_STALE_SECONDS = 900


def evaluation_user_id(run: EvaluationRun) -> str:
    return f"{CONSOLE_USER_PREFIX}evaluation-{run.id}"


def settings_snapshot(
    workspace: Workspace, model: str, k: int | None = None, judge_model: str | None = None
) -> dict[str, Any]:
    """The workspace's settings a run's figures depend on, as they are now,
    ``k``, the cutoff of recall@k and nDCG@k (by default top_k), and the
    judge's model (None: no judge)."""
    return {
        "model": model,
        "k": k or workspace.top_k,
        "judge_model": judge_model,
        "embedding_model": workspace.embedding_model,
        "answerability_threshold": workspace.answerability_threshold,
        "top_k": workspace.top_k,
        "system_prompt_sha256": hashlib.sha256(workspace.system_prompt.encode()).hexdigest(),
    }


def run_list(*, workspace: Workspace) -> QuerySet[EvaluationRun]:
    return EvaluationRun.objects.filter(test_set__workspace=workspace).select_related("test_set")


def run_get(*, workspace: Workspace, run_id: object) -> EvaluationRun:
    """Another workspace's run, or a malformed id, is a 404 like a missing one."""
    found = run_list(workspace=workspace).filter(id=uuid_or_404(run_id)).first()
    if found is None:
        raise NotFound()
    return found


def run_cutoff(run: EvaluationRun) -> int:
    """The run's k (runs made before it was stored: the workspace's top_k then)."""
    snapshot = run.settings_snapshot
    return int(snapshot.get("k") or snapshot["top_k"])


def run_create(
    *, test_set: TestSet, model: str | None = None, k: int | None = None, judge_model: str | None = None
) -> EvaluationRun:
    """A pending run of every item of ``test_set`` (400: an unknown model, an
    empty set, a judge that is not a generative model); ``k``: the cutoff of
    recall@k and nDCG@k, by default top_k; ``judge_model``: a generative
    model that judges each reply (evaluations/judge.py)."""
    model = model or DEFAULT_MODEL
    resolve_model(model)
    if judge_model:
        judge_backend(judge_model)
    total = TestItem.objects.filter(test_set=test_set).count()
    if total == 0:
        raise ValidationFailed(
            "The test set has no item.", fields={"test_set_id": ["The test set has no item."]}
        )
    return EvaluationRun.objects.create(
        test_set=test_set,
        model=model,
        total=total,
        settings_snapshot=settings_snapshot(test_set.workspace, model, k, judge_model or None),
    )


def run_enqueue_on_commit(run: EvaluationRun) -> None:
    """Queue the run (evaluations/tasks.py) when the current transaction commits."""
    run_id = str(run.id)
    transaction.on_commit(lambda: current_app.send_task(RUN_TASK, args=[run_id]), robust=True)


def _turn(run: EvaluationRun, item: TestItem, principal: ApiKey) -> dict[str, Any]:
    """One item through the chat turn: what a result stores of it."""
    workspace = run.test_set.workspace
    conversation = (
        conversation_parse(item.messages) if item.messages is not None else Conversation.single(item.question)
    )
    started = time.monotonic()
    try:
        prepared = turn_prepare(
            TurnRequest(
                principal=principal,
                workspace=workspace,
                external_user_id=evaluation_user_id(run),
                conversation=conversation,
                model=run.model,
            )
        )
        reply = turn_complete(prepared)
    except ApplicationError as exc:
        # An error reply (the model server down, say) is this item's result, not the run's end.
        return {
            "retrieved": [],
            "outcome": OTHER,
            "reply": f"[{exc.code}] {exc.message}",
            "cited": None,
            "latency_ms": round((time.monotonic() - started) * 1000),
            "language_right": None,
            "reason": None,
            "figures": {},
        }
    latency_ms = round((time.monotonic() - started) * 1000)
    retrieved = list(dict.fromkeys(str(p.resource_id) for p in prepared.retrieval.passages))
    return {
        "retrieved": retrieved,
        "outcome": reply_evaluated_outcome(reply),
        "reply": reply.content,
        "cited": first_cited_resource(reply),
        "latency_ms": latency_ms,
        "language_right": language_right(
            question=conversation.question,
            earlier_questions=[user for user, _ in conversation.history],
            reply=reply.content,
        ),
        # Why no answer or a form, as the reply was stored.
        "reason": reply.reason,
        "figures": reply.reason_figures or {},
    }


def _judged(judge: BaseGenerativeBackend | None, item: TestItem, turn: dict[str, Any]) -> tuple[str, str]:
    if judge is None:
        return "", ""
    question = item.question if item.messages is None else conversation_parse(item.messages).question
    return reply_judge(
        judge,
        question=question,
        reply=turn["reply"],
        expected_answer=item.expected_answer,
        expected_outcome=item.expected_outcome,
    )


def _result(run: EvaluationRun, item: TestItem, position: int, turn: dict[str, Any]) -> EvaluationResult:
    scores: ItemScores = item_scores(
        expected=item.expected_resource_ids,
        retrieved=turn["retrieved"],
        k=run_cutoff(run),
        cited=turn["cited"],
        outcome=turn["outcome"],
        expected_outcome=item.expected_outcome,
    )
    return EvaluationResult.objects.create(
        run=run,
        item=item,
        source_message_id=item.source_message_id,
        position=position,
        question=item.question if item.messages is None else conversation_parse(item.messages).question,
        expected_resource_ids=item.expected_resource_ids,
        expected_outcome=item.expected_outcome,
        retrieved_resource_ids=turn["retrieved"],
        outcome=turn["outcome"],
        reply=turn["reply"],
        first_cited_resource_id=uuid.UUID(turn["cited"]) if turn["cited"] else None,
        latency_ms=turn["latency_ms"],
        recall=scores.recall,
        reciprocal_rank=scores.reciprocal_rank,
        first_citation_expected=scores.first_citation_expected,
        outcome_right=scores.outcome_right,
        reply_language_right=turn["language_right"],
        judge_verdict=turn["judge"][0],
        judge_reason=turn["judge"][1],
        reason=turn["reason"],
        reason_figures=turn["figures"],
    )


def run_execute(run_id: uuid.UUID | str) -> EvaluationRun | None:
    """Run a pending run to its end (completed, or failed with the error);
    a run already started or gone is left alone (a redelivered task)."""
    claimed = EvaluationRun.objects.filter(id=run_id, status=RunStatus.PENDING).update(
        status=RunStatus.RUNNING, heartbeat_at=timezone.now()
    )
    run = EvaluationRun.objects.select_related("test_set__workspace").filter(id=run_id).first()
    if not claimed or run is None:
        return run
    workspace = run.test_set.workspace
    principal = ApiKey(organization=workspace.organization, name="evaluation", scope=ApiKeyScope.ADMIN)
    judge_model = run.settings_snapshot.get("judge_model")
    try:
        judge = judge_backend(judge_model) if judge_model else None
        for position, item in enumerate(TestItem.objects.filter(test_set=run.test_set)[: run.total]):
            turn = _turn(run, item, principal)
            _result(run, item, position, turn | {"judge": _judged(judge, item, turn)})
            EvaluationRun.objects.filter(id=run.id).update(done=F("done") + 1, heartbeat_at=timezone.now())
        results = list(run.results.all())
        run.metrics = run_metrics(results, k=run_cutoff(run))
        if judge_model:
            run.metrics["judge"] = judge_metrics(judge_model, results)
        run.status = RunStatus.COMPLETED
    except Exception as exc:
        logger.exception("evaluation run %s failed", run.id)
        run.status, run.error = RunStatus.FAILED, f"{type(exc).__name__}: {exc}"[:2000]
    finally:
        user_sessions_delete(workspace_id=workspace.id, external_user_id=evaluation_user_id(run))
    run.finished_at = timezone.now()
    run.done = run.results.count()
    run.save(update_fields=["metrics", "status", "error", "finished_at", "done"])
    return run


def runs_stale_sweep() -> tuple[int, int]:
    """Periodic (CELERY_BEAT_SCHEDULE): queue again the pending runs whose
    task was lost (starting claims a pending run once, so a second task does
    nothing), and fail the running runs whose worker stopped (the error
    says so; the run can be started again as a new run), so no run is left
    ``pending`` or ``running`` for ever. Returns (queued, failed)."""
    now = timezone.now()
    lost = list(
        EvaluationRun.objects.filter(
            status=RunStatus.PENDING, created_at__lt=now - dt.timedelta(seconds=PENDING_REQUEUE_SECONDS)
        ).values_list("id", flat=True)
    )
    # A message still waiting in the queue is no lost one: the runs wait for
    # a busy worker, and queuing them again every minute would pile copies up.
    if lost and queue_waiting(settings.EVALUATION_QUEUE) == 0:
        for run_id in lost:
            current_app.send_task(RUN_TASK, args=[str(run_id)])
    else:
        lost = []
    stale = EvaluationRun.objects.filter(
        status=RunStatus.RUNNING, heartbeat_at__lt=now - dt.timedelta(seconds=RUNNING_STALE_SECONDS)
    ).select_related("test_set")
    failed = 0
    for run in stale:
        with transaction.atomic():
            if not EvaluationRun.objects.filter(id=run.id, status=RunStatus.RUNNING).update(
                status=RunStatus.FAILED,
                error="The worker running it stopped before its end; start a new run.",
                finished_at=now,
            ):
                continue
            user_sessions_delete(
                workspace_id=run.test_set.workspace_id, external_user_id=evaluation_user_id(run)
            )
        failed += 1
    return len(lost), failed
