from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, cast

from django.contrib.postgres.fields import ArrayField
from django.db import models

from chat.contract import DecisionReason
from workspaces.models import Workspace

if TYPE_CHECKING:
    from chat.contract import GuardData, Provenance, Reply

# The end users of the curation console's playground are named
# ``console:<username>`` (console/playground.py). Their turns are real turns
# through the same services, kept apart from the integrator's end users: the
# API refuses the prefix in an ``external_user_id`` and never shows their
# sessions, and the transcript export and the dashboard leave them out unless asked.
CONSOLE_USER_PREFIX = "console:"


class Session(models.Model):
    """A conversation thread of one end user in one workspace."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="sessions")
    external_user_id = models.CharField(max_length=255)
    title = models.CharField(max_length=200)
    # The integrator's system message (``messages[0]`` with role system): shown
    # to the model below the workspace's instructions on every turn.
    system_note = models.TextField(blank=True, default="")
    message_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    # Last activity: bumped by every message; drives ordering and retention.
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [
            # "This end user's sessions, most recently active first".
            models.Index(
                fields=["workspace", "external_user_id", "-updated_at", "-id"], name="session_user_recent_idx"
            ),
            # Admin listing of a workspace, export by updated_since, retention.
            models.Index(fields=["workspace", "-updated_at", "-id"], name="session_ws_recent_idx"),
        ]

    def __str__(self) -> str:
        return self.title


class MessageRole(models.TextChoices):
    USER = "user", "user"
    ASSISTANT = "assistant", "assistant"


class Grounding(models.TextChoices):
    DOCUMENTS = "documents", "documents"
    GENERAL_KNOWLEDGE = "general_knowledge", "general_knowledge"
    # The workspace has documents, but none answers (or the message was small talk).
    NONE = "none", "none"


class ReviewStatus(models.TextChoices):
    NONE = "", "not for review"
    PENDING = "pending", "pending"
    REVIEWED = "reviewed", "reviewed"


class Message(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="messages")
    # Position in the session, 0-based; unique so that concurrent posts to one
    # session cannot interleave or duplicate positions.
    sequence = models.PositiveIntegerField()
    role = models.CharField(max_length=10, choices=MessageRole.choices)
    content = models.TextField()
    # Assistant messages: {"type", "parts", "form"} as returned by the API.
    response = models.JSONField(null=True, blank=True)
    grounding = models.CharField(max_length=20, choices=Grounding.choices, blank=True, default="")
    model = models.CharField(max_length=200, blank=True, default="")
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    generation_ms = models.PositiveIntegerField(null=True, blank=True)
    # [{"passage_id", "resource_id", "score", "rank"}] retrieved for this turn.
    retrieved = models.JSONField(default=list, blank=True)
    # Citations the model made to passages that were not retrieved (dropped).
    invalid_citations = models.JSONField(default=list, blank=True)
    # Set when the answer is the safe fallback after a failed generation.
    is_fallback = models.BooleanField(default=False)
    # Set when generation was unavailable and the extractive engine answered
    # (Workspace.on_generation_unavailable); ``model`` is then the engine's.
    degraded = models.BooleanField(default=False)
    # How closely the documents answer the question (the best sentence's
    # score, 0..1; chat/services/turn/decide.py), compared with the
    # workspace's answerability_threshold; null when not assessed (small talk,
    # no documents, messages the integrator supplied).
    answerability = models.FloatField(null=True, blank=True)
    # Why the reply is no answer or a form (DecisionReason, the prompt
    # trace's "reason") and the figures that decided it; null on an answer,
    # small talk, user messages and replies stored before it was recorded.
    reason = models.CharField(
        max_length=32, null=True, blank=True, choices=[(r.value, r.value) for r in DecisionReason]
    )
    reason_figures = models.JSONField(null=True, blank=True)
    # {"messages_hash": SHA-256 of the canonical JSON of the messages the
    # reply was produced from}; null on user messages and on assistant
    # messages the integrator supplied in ``messages`` (model "client").
    provenance = models.JSONField(null=True, blank=True)
    # {"action": "flag"|"block", "rule_ids": [...]} when an output guard rule
    # (or a claims check) matched the reply; null otherwise.
    guard = models.JSONField(null=True, blank=True)
    # Who the turn could read from, as retrieval applied it:
    # {"filters", "groups", "resource_ids"}, each null when not restricted
    # (retrieval/filters.py, Access.as_json; the prompt trace's "access").
    # Null on user messages, on assistant messages the integrator supplied
    # in ``messages``, and on replies stored before it was recorded.
    access = models.JSONField(null=True, blank=True)
    # A blocked reply: what the model wrote ({"content", "response"}), kept
    # for review; content/response hold the safe reply the user got.
    guard_original = models.JSONField(null=True, blank=True)
    review_status = models.CharField(
        max_length=10, choices=ReviewStatus.choices, blank=True, default=ReviewStatus.NONE
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    reviewed_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["session", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["session", "sequence"], name="message_unique_sequence"),
        ]
        indexes = [
            # The review queue: replies waiting for a reviewer.
            models.Index(
                fields=["review_status", "created_at"],
                name="message_review_idx",
                condition=models.Q(review_status="pending"),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.role} #{self.sequence}"

    @property
    def guard_data(self) -> GuardData | None:
        return cast("GuardData | None", self.guard)

    @property
    def provenance_data(self) -> Provenance | None:
        return cast("Provenance | None", self.provenance)

    @property
    def reply(self) -> Reply | None:
        """``response`` as the typed reply contract (None on user messages)."""
        return cast("Reply | None", self.response)


class FeedbackRating(models.TextChoices):
    UP = "up", "up"
    DOWN = "down", "down"


class Feedback(models.Model):
    """An end user's rating of an assistant message; one per message and user."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="feedback")
    external_user_id = models.CharField(max_length=255)
    rating = models.CharField(max_length=4, choices=FeedbackRating.choices)
    comment = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["message", "external_user_id"], name="feedback_one_per_user"),
        ]

    def __str__(self) -> str:
        return f"{self.rating} on {self.message_id}"


class GuardAction(models.TextChoices):
    FLAG = "flag", "flag for review (the reply is returned)"
    BLOCK = "block", "block (the safe reply is returned, the original kept for review)"


class GuardScope(models.TextChoices):
    ANSWER = "answer", "answers"
    FORM = "form", "forms"
    BOTH = "both", "answers and forms"


class GuardRule(models.Model):
    """An output guard rule of a workspace: a regular expression run on every
    reply (seed 000's third layer). Rules are ordered; all are evaluated."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="guard_rules")
    position = models.PositiveSmallIntegerField()
    pattern = models.TextField()
    applies_to = models.CharField(max_length=6, choices=GuardScope.choices, default=GuardScope.BOTH)
    action = models.CharField(max_length=5, choices=GuardAction.choices, default=GuardAction.FLAG)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["workspace", "position"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "position"], name="guard_rule_unique_position"),
        ]

    def __str__(self) -> str:
        return f"{self.action}: {self.pattern[:60]}"


class GuardPolicy(models.Model):
    """A workspace's safe reply (what a blocked reply is replaced with) and
    its claims checks: yes/no statements a generative model answers about
    what the user claims; a "yes" routes the turn to review (seed 000's
    second layer)."""

    workspace = models.OneToOneField(
        Workspace, on_delete=models.CASCADE, primary_key=True, related_name="guard_policy"
    )
    safe_reply = models.TextField(blank=True, default="")
    claims = ArrayField(models.CharField(max_length=300), blank=True, default=list)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"guard policy of {self.workspace_id}"


class ReviewItem(Message):
    """A reply the output guard caught (flagged or blocked), as the review
    queue of the console lists it."""

    class Meta:
        proxy = True
        verbose_name = "reply to review"
        verbose_name_plural = "review queue"
