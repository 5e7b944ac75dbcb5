"""What the console's evaluation pages show and take (console/views/evaluations.py):
the forms (a test set, an item, an import, a reply made a test item) and the
comparison of two runs drawn as a server-side chart (console/charts.py).

The pages write through the evaluation wing's own functions
(evaluations/), so an item made here is held to the API's checks.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django import forms
from django.utils.safestring import SafeString

from console.charts import paired_bars
from evaluations.compare import runs_compare
from evaluations.items import MAX_QUESTION_CHARS
from evaluations.judge import VERDICTS as JUDGE_VERDICTS
from evaluations.metrics import QUALITY_METRICS
from evaluations.models import EvaluationResult, EvaluationRun, ExpectedOutcome, TestSet
from resources.models import Resource
from workspaces.models import Workspace

# The documents a form offers (the workspace's first, by title).
DOCUMENT_CHOICES = 500

METRIC_LABELS = {
    "recall_at_k": "Recall@k",
    "ndcg_at_k": "nDCG@k",
    "mrr": "MRR",
    "first_citation_expected": "First citation expected",
    "outcome_right": "Outcome right",
    "reply_language_right": "Reply language right",
}


def document_choices(workspace: Workspace, also: Iterable[object] = ()) -> list[tuple[str, str]]:
    """The documents a form offers: the workspace's first DOCUMENT_CHOICES by
    title, and those of ``also`` (the items' expected ones) beyond them, so
    an item's own documents stay choosable. Read once per page."""
    documents = Resource.objects.filter(workspace=workspace)
    first = [(str(r.id), r.title) for r in documents.order_by("title", "id")[:DOCUMENT_CHOICES]]
    shown = {pk for pk, _ in first}
    wanted = {str(pk) for pk in also} - shown
    beyond = documents.filter(id__in=wanted).order_by("title", "id") if wanted else documents.none()
    return first + [(str(r.id), r.title) for r in beyond]


class TestSetForm(forms.Form):
    __test__ = False

    name = forms.CharField(max_length=200, strip=True)


class ImportForm(forms.Form):
    file = forms.FileField(help_text="JSONL (one item a line) or CSV (a header naming question, …).")


class ItemForm(forms.Form):
    """An item's question, expected documents and outcome (a conversation
    item keeps its messages; its question is not edited here)."""

    question = forms.CharField(
        max_length=MAX_QUESTION_CHARS, required=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    expected_resource_ids = forms.MultipleChoiceField(
        required=False, label="Expected documents", widget=forms.SelectMultiple(attrs={"size": 4})
    )
    expected_outcome = forms.ChoiceField(choices=ExpectedOutcome.choices)

    def __init__(self, *args: Any, documents: list[tuple[str, str]], **kwargs: Any) -> None:
        """``documents``: the choices, ``document_choices``'s (one query for a page of items)."""
        super().__init__(*args, **kwargs)
        field = self.fields["expected_resource_ids"]
        assert isinstance(field, forms.MultipleChoiceField)
        field.choices = documents
        if self.prefix and self.prefix != "new":
            # The fields stand in the items' table; their form is beside them.
            for bound in self.fields.values():
                bound.widget.attrs["form"] = f"save-{self.prefix}"

    def item_data(self, *, conversation: bool) -> dict[str, Any]:
        data: dict[str, Any] = {
            "expected_resource_ids": [uuid.UUID(i) for i in self.cleaned_data["expected_resource_ids"]],
            "expected_outcome": self.cleaned_data["expected_outcome"],
        }
        if not conversation:
            data["question"] = self.cleaned_data["question"]
        return data


class FromReplyForm(forms.Form):
    """A reply made a test item: into an existing set, or a new one by name."""

    test_set = forms.ChoiceField(required=False, label="Test set")
    new_test_set = forms.CharField(max_length=200, required=False, label="or a new test set named")
    expected_resource_ids = forms.MultipleChoiceField(
        required=False, label="Expected documents", widget=forms.SelectMultiple(attrs={"size": 6})
    )
    expected_outcome = forms.ChoiceField(choices=ExpectedOutcome.choices)

    def __init__(self, *args: Any, workspace: Workspace, cited: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        sets = self.fields["test_set"]
        assert isinstance(sets, forms.ChoiceField)
        sets.choices = [("", "(a new test set)")] + [
            (str(s.id), s.name) for s in TestSet.objects.filter(workspace=workspace)
        ]
        documents = self.fields["expected_resource_ids"]
        assert isinstance(documents, forms.MultipleChoiceField)
        documents.choices = document_choices(workspace, also=[cited] if cited else [])

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if not cleaned.get("test_set") and not (cleaned.get("new_test_set") or "").strip():
            self.add_error("new_test_set", "Choose a test set, or name a new one.")
        return cleaned


@dataclass(frozen=True)
class Comparison:
    baseline: EvaluationRun
    chart: SafeString
    counts: dict[str, int]
    better: list[dict[str, Any]]
    worse: list[dict[str, Any]]
    deltas: dict[str, float | None]
    regressions: list[str]


def comparison(run: EvaluationRun, baseline: EvaluationRun) -> Comparison:
    """``run`` against ``baseline`` (both completed; compare.py's 400 otherwise)."""
    compared = runs_compare(run=run, baseline=baseline)
    rows = [
        (METRIC_LABELS.get(name, name), compared["metrics"].get(name), compared["baseline_metrics"].get(name))
        for name in QUALITY_METRICS
    ]
    chart = paired_bars(
        rows, first="This run", second="Baseline", title="Quality metrics, this run and the baseline"
    )
    return Comparison(
        baseline=baseline,
        chart=chart,
        counts=compared["counts"],
        better=[i for i in compared["items"] if i["verdict"] == "better"],
        worse=[i for i in compared["items"] if i["verdict"] == "worse"],
        deltas=compared["deltas"],
        regressions=compared["regressions"],
    )


@dataclass(frozen=True)
class RetrievedDocument:
    title: str
    expected: bool


def retrieved_titles(
    workspace: Workspace, results: list[EvaluationResult]
) -> dict[object, list[RetrievedDocument]]:
    """Per result id, its retrieved documents by title (an id once the
    document is deleted), each marked when it was an expected one (one query)."""
    ids = {doc for result in results for doc in result.retrieved_resource_ids}
    titles = {
        str(pk): title
        for pk, title in Resource.objects.filter(workspace=workspace, id__in=ids).values_list("id", "title")
    }
    return {
        result.id: [
            RetrievedDocument(titles.get(doc, doc), doc in result.expected_resource_ids)
            for doc in result.retrieved_resource_ids
        ]
        for result in results
    }


def metric_rows(metrics: dict[str, Any] | None) -> list[tuple[str, Any]]:
    """The run's figures as the page lists them."""
    if not metrics:
        return []
    names = (
        "items",
        "items_with_expected_documents",
        "k",
        *QUALITY_METRICS,
        "latency_p50_ms",
        "latency_p95_ms",
    )
    rows = [(METRIC_LABELS.get(name, name.replace("_", " ")), metrics.get(name)) for name in names]
    judge = metrics.get("judge")
    if judge:
        # A model's opinion: labelled so, beside the deterministic figures.
        verdicts = ", ".join(f"{v.replace('_', ' ')} {judge.get(v)}" for v in JUDGE_VERDICTS)
        rows.append(
            (
                f"Judged by {judge['model']} (a model's opinion)",
                f"{verdicts}; {judge['judged']} judged, {judge['unjudged']} not",
            )
        )
    return rows
