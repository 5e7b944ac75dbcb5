"""Evaluation runs: start one, follow its progress, read its results and
compare two (admin keys; docs/evaluation.md)."""

from __future__ import annotations

from typing import Any, ClassVar

from django.db import transaction
from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from daneshyar.api import StringField, ok, query_data
from daneshyar.schema import envelope
from daneshyar.views import ListCreateMixin, ListMixin, Operation, RetrieveMixin, SerializerClass
from evaluations import compare, items, runs
from evaluations.models import REASON_CHOICES, EvaluationResult, EvaluationRun, ExpectedOutcome, RunStatus
from evaluations.outcomes import OUTCOME_CHOICES
from workspaces.access import WorkspaceGenericApi
from workspaces.models import Workspace

TAGS = ["Evaluation"]


class RunSerializer(serializers.ModelSerializer[EvaluationRun]):
    status = serializers.ChoiceField(choices=RunStatus.choices)
    progress = serializers.SerializerMethodField()
    settings = serializers.JSONField(
        source="settings_snapshot",
        help_text="The workspace's settings when the run started: model, judge_model, k (the cutoff of "
        "recall_at_k and ndcg_at_k), embedding_model, answerability_threshold, top_k, "
        "system_prompt_sha256.",
    )
    metrics = serializers.JSONField(
        allow_null=True,
        help_text="Once completed: items, items_with_expected_documents, k, recall_at_k, recall_at "
        "{1, 3, 5, 10, 20 up to k}, ndcg_at_k, "
        "mrr, first_citation_expected (of the replies that cite), outcome_right, "
        "reply_language_right (0..1; of the replies that tell their language), "
        "by_expected_outcome {answer|no_answer|ask_back: {items, outcome_right}}, latency_p50_ms, "
        "latency_p95_ms; with a judge, judge {model, kind, judged, unjudged, correct, partly_correct, "
        "incorrect}: a model's opinion, apart from the deterministic metrics.",
    )

    class Meta:
        model = EvaluationRun
        fields = [
            "id",
            "test_set_id",
            "status",
            "model",
            "progress",
            "settings",
            "metrics",
            "error",
            "created_at",
            "finished_at",
        ]
        ref_name = "EvaluationRun"

    def get_progress(self, run: EvaluationRun) -> dict[str, int]:
        return {"done": run.done, "total": run.total}


class ResultSerializer(serializers.ModelSerializer[EvaluationResult]):
    expected_outcome = serializers.ChoiceField(choices=ExpectedOutcome.choices)
    outcome = serializers.ChoiceField(choices=OUTCOME_CHOICES)
    expected_resource_ids = serializers.ListField(child=serializers.UUIDField())
    retrieved_resource_ids = serializers.ListField(
        child=serializers.UUIDField(), help_text="The distinct documents retrieved, best first."
    )
    reason = serializers.ChoiceField(
        choices=REASON_CHOICES,
        allow_null=True,
        help_text="Why the reply is no answer or a form (the prompt trace's reason codes, docs/api.md); "
        "null for an answer, small talk or an error reply.",
    )
    reason_figures = serializers.DictField(
        help_text="The figures that decided the reason (answerability, threshold, subject_words, "
        "candidates, scores, …); {} without one."
    )

    class Meta:
        model = EvaluationResult
        fields = [
            "item_id",
            "position",
            "question",
            "expected_resource_ids",
            "expected_outcome",
            "retrieved_resource_ids",
            "outcome",
            "outcome_right",
            "reply_language_right",
            "judge_verdict",
            "judge_reason",
            "reason",
            "reason_figures",
            "reply",
            "first_cited_resource_id",
            "first_citation_expected",
            "recall",
            "reciprocal_rank",
            "latency_ms",
        ]
        ref_name = "EvaluationResult"


class RunInputSerializer(serializers.Serializer[Any]):
    test_set_id = serializers.UUIDField()
    model = StringField(
        required=False, max_length=200, help_text='A model id of GET /models/; default "extractive".'
    )
    k = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=50,
        help_text="The cutoff of recall_at_k and ndcg_at_k; default the workspace's top_k.",
    )
    judge_model = StringField(
        required=False,
        max_length=200,
        help_text="A generative model id of GET /models/ that judges each reply (optional; its verdicts "
        "are a model's opinion, reported apart as metrics.judge and never counted as a regression).",
    )

    class Meta:
        ref_name = "EvaluationRunInput"


class CompareParamsSerializer(serializers.Serializer[Any]):
    margin = serializers.FloatField(
        required=False,
        default=compare.DEFAULT_MARGIN,
        min_value=0.0,
        max_value=1.0,
        help_text="A quality metric lower than the baseline's by more than this is a regression.",
    )

    class Meta:
        ref_name = "EvaluationCompareParams"


class RunApi(WorkspaceGenericApi):
    tags = TAGS
    row_serializer: ClassVar[SerializerClass] = RunSerializer
    schema_name = "EvaluationRun"

    def row(self, **path: Any) -> EvaluationRun:
        return runs.run_get(workspace=self.workspace, run_id=path["run_id"])


class RunListApi(ListCreateMixin, RunApi):
    admin_methods = frozenset({"GET", "POST"})
    ordering = ("-created_at", "-id")
    create_serializer = RunInputSerializer
    create_status = 202
    list_operation = Operation(
        "evaluations_list", "List evaluation runs", "The workspace's runs, newest first (admin keys)."
    )
    create_operation = Operation(
        "evaluations_create",
        "Start an evaluation run",
        "Every item of the test set through the chat turn, in the background (admin keys). "
        "202 with the pending run; follow `progress` with `GET …/evaluations/{id}/`.",
    )

    def rows(self, owner: Workspace) -> QuerySet[EvaluationRun]:
        return runs.run_list(workspace=owner)

    def create(self, owner: Workspace, data: Any) -> EvaluationRun:
        test_set = items.test_set_get(workspace=owner, test_set_id=data["test_set_id"])
        with transaction.atomic():
            run = runs.run_create(
                test_set=test_set,
                model=data.get("model"),
                k=data.get("k"),
                judge_model=data.get("judge_model"),
            )
            runs.run_enqueue_on_commit(run)
        return run


class RunDetailApi(RetrieveMixin, RunApi):
    admin_methods = frozenset({"GET"})
    retrieve_operation = Operation(
        "evaluations_get",
        "Get an evaluation run",
        "Its status, progress, settings and, once completed, metrics (admin keys).",
    )


class RunResultListApi(ListMixin, RunApi):
    admin_methods = frozenset({"GET"})
    row_serializer = ResultSerializer
    schema_name = "EvaluationResult"
    ordering = ("position", "id")
    list_operation = Operation(
        "evaluations_items",
        "List a run's per-item results",
        "In the test set's order: the documents retrieved, the reply, its outcome and the "
        "item's scores (admin keys).",
    )

    def owner(self, **path: Any) -> EvaluationRun:
        return self.row(**path)

    def rows(self, owner: EvaluationRun) -> QuerySet[EvaluationResult]:
        return EvaluationResult.objects.filter(run=owner)


class RunCompareApi(RunApi):
    admin_methods = frozenset({"GET"})

    @extend_schema(
        operation_id="evaluations_compare",
        summary="Compare two evaluation runs",
        description=(
            "Run `id` against the baseline `other_id` (both completed, of this workspace): `deltas` "
            "(run minus baseline per metric), `regressions` (the quality metrics lower by more than "
            "`margin`), and item by item (the items both ran) `verdict` better, worse or same — judged "
            "on the outcome, then the first citation, then the expected documents' rank (admin keys)."
        ),
        tags=TAGS,
        parameters=[CompareParamsSerializer],
        responses=envelope(
            "EvaluationComparison",
            serializers.JSONField(
                help_text="run_id, baseline_id, metrics, baseline_metrics, deltas, "
                "margin, regressions, counts {better, worse, same}, items."
            ),
        ),
    )
    def get(self, request: Request, workspace_id: str, run_id: str, other_id: str) -> Response:
        params = CompareParamsSerializer(data=query_data(request))
        params.is_valid(raise_exception=True)
        run = self.row(run_id=run_id)
        baseline = self.row(run_id=other_id)
        return ok(compare.runs_compare(run=run, baseline=baseline, margin=params.validated_data["margin"]))
