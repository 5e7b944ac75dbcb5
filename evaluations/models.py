"""Evaluation test sets and runs (docs/evaluation.md).

A test set holds a workspace's questions (or whole conversations) with the
documents that should be found and the outcome the reply should have; a run
puts every item through the chat turn and keeps, per item, what came back
and, per run, the metrics and the workspace's settings at the time.
"""

from __future__ import annotations

import uuid

from django.db import models

from chat.contract import DecisionReason
from chat.models import Message
from evaluations.outcomes import OUTCOME_CHOICES
from workspaces.models import Workspace

REASON_CHOICES = [(reason.value, reason.value.replace("_", " ")) for reason in DecisionReason]


class ExpectedOutcome(models.TextChoices):
    ANSWER = "answer", "an answer citing the documents"
    NO_ANSWER = "no_answer", "the no-answer reply (the documents do not say)"
    ASK_BACK = "ask_back", "a question back (a form asking which one is meant)"


class RunStatus(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"


class TestSet(models.Model):
    # Not a pytest test class, whatever its name says.
    __test__ = False

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="test_sets")
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return self.name


class TestItem(models.Model):
    __test__ = False

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    test_set = models.ForeignKey(TestSet, on_delete=models.CASCADE, related_name="items")
    # The order of the set (an import keeps its lines' order).
    position = models.PositiveIntegerField(default=0)
    # One of the two: a single question, or a conversation ending with the
    # user's question ([{role, content}], as the chat endpoint's ``messages``).
    question = models.TextField(blank=True, default="")
    messages = models.JSONField(null=True, blank=True)
    expected_resource_ids = models.JSONField(default=list, blank=True)
    expected_answer = models.TextField(blank=True, default="")
    expected_outcome = models.CharField(
        max_length=16, choices=ExpectedOutcome.choices, default=ExpectedOutcome.ANSWER
    )
    # The reply an item was built from (the console's "Add to test set"):
    # deleting the end user's data, or the retention sweep, deletes the
    # message and so the item built from their text (docs/evaluation.md).
    source_message = models.ForeignKey(
        Message, on_delete=models.CASCADE, null=True, blank=True, related_name="test_items"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["position", "created_at", "id"]

    def __str__(self) -> str:
        return self.question[:80] or "(a conversation)"


class EvaluationRun(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    test_set = models.ForeignKey(TestSet, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.PENDING)
    model = models.CharField(max_length=200)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    # The workspace's settings when the run started (embedding model,
    # answerability threshold, top_k, model, the system prompt's hash).
    settings_snapshot = models.JSONField(default=dict)
    metrics = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When the worker running it last finished an item (or claimed it): a
    # run whose worker stopped is told from one still working by it
    # (evaluations/runs.py, runs_stale_sweep).
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"run {self.id} ({self.status})"


class EvaluationResult(models.Model):
    """What one item of a run got back."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="results")
    # Null once the item is deleted from its test set (the result stays).
    item = models.ForeignKey(TestItem, on_delete=models.SET_NULL, null=True, related_name="results")
    # The item's source reply, when it was built from one: the result copies
    # the end user's question and the reply, so deleting their data (or the
    # retention sweep) deletes it with the message, as it deletes the item.
    # The cascade is the database's business here because chat, below this
    # app, deletes the messages and never imports it. Its index serves that
    # cascade's lookup.
    source_message = models.ForeignKey(
        Message, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    position = models.PositiveIntegerField()
    question = models.TextField()
    expected_resource_ids = models.JSONField(default=list)
    expected_outcome = models.CharField(max_length=16, choices=ExpectedOutcome.choices)
    retrieved_resource_ids = models.JSONField(default=list)
    # The reply's outcome as the analytics classify it, in the evaluation's
    # words (evaluations/outcomes.py).
    outcome = models.CharField(max_length=16, choices=OUTCOME_CHOICES)
    reply = models.TextField(blank=True, default="")
    first_cited_resource_id = models.UUIDField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField()
    # The per-item scores the metrics average (null where they do not apply:
    # an item without expected documents).
    recall = models.FloatField(null=True, blank=True)
    reciprocal_rank = models.FloatField(null=True, blank=True)
    first_citation_expected = models.BooleanField(null=True, blank=True)
    outcome_right = models.BooleanField()
    # The reply is in the language it should be (the question's, as the turn
    # chooses it); null when that cannot be told (an empty or error reply,
    # a reply too short to tell).
    reply_language_right = models.BooleanField(null=True, blank=True)
    # The optional judge's verdict (evaluations/judge.py: a generative
    # model's opinion, kept apart from the scores above): correct,
    # partly_correct, incorrect, or empty (no judge, or it failed: the reason says why).
    judge_verdict = models.CharField(max_length=16, blank=True, default="")
    judge_reason = models.CharField(max_length=200, blank=True, default="")
    # Why the reply is no answer or a form (chat.contract.DecisionReason:
    # below_threshold, uncovered_subject, ...; empty for an answer, small
    # talk or an error reply: null), and the figures that decided it.
    reason = models.CharField(max_length=32, null=True, blank=True, choices=REASON_CHOICES)
    reason_figures = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["run", "position"], name="evaluation_result_unique_position")
        ]

    def __str__(self) -> str:
        return f"{self.position}: {self.outcome}"
