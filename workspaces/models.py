from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from languages import ENGLISH
from workspaces.metadata_keys import metadata_keys_validate
from workspaces.origins import ORIGIN_MAX_LENGTH, origins_validate
from workspaces.texts import texts_validate


class RateLimitOverrides(models.Model):
    """Per-minute rate limits that override the deployment's defaults
    (RATE_LIMIT_* settings) for an organization or one of its workspaces
    (workspaces/ratelimit.py). Empty means "inherit"."""

    rate_requests_per_minute = models.PositiveIntegerField(
        null=True, blank=True, help_text="All requests of one API key."
    )
    rate_chat_per_minute = models.PositiveIntegerField(
        null=True, blank=True, help_text="Chat turns of one API key."
    )
    rate_chat_per_user_per_minute = models.PositiveIntegerField(
        null=True, blank=True, help_text="Chat turns of one end user (external_user_id) of one API key."
    )
    rate_uploads_per_minute = models.PositiveIntegerField(
        null=True, blank=True, help_text="Document uploads of one API key."
    )

    class Meta:
        abstract = True


class Organization(RateLimitOverrides):
    """A tenant: one integrator. Owns workspaces and API keys."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    # Quotas over all the organization's workspaces; empty: ORG_QUOTA_DOCUMENTS
    # and ORG_QUOTA_BYTES apply (0 there: no quota). Checked on every upload.
    quota_documents = models.PositiveIntegerField(
        null=True, blank=True, help_text="Documents the organization may hold. Empty: the server default."
    )
    quota_bytes = models.PositiveBigIntegerField(
        null=True,
        blank=True,
        help_text="Bytes of uploaded files the organization may store. Empty: the server default.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class GenerationFallback(models.TextChoices):
    """What a chat turn does when the generative backend is unavailable."""

    EXTRACTIVE = "extractive", "answer with the extractive engine (degraded)"
    ERROR = "error", "answer 503 llm_unavailable"


DEFAULT_ANSWERABILITY_THRESHOLD = 0.38


def configured_embedding_model() -> str:
    """A new workspace's embedding model: the configured one (it has no vectors yet)."""
    return str(settings.EMBEDDING_MODEL_NAME)


class Workspace(RateLimitOverrides):
    """Documents and conversations that belong together, with retrieval settings."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="workspaces")
    name = models.CharField(max_length=200)
    system_prompt = models.TextField(blank=True, default="")
    history_turns = models.PositiveSmallIntegerField(
        default=20, validators=[MinValueValidator(0), MaxValueValidator(100)]
    )
    top_k = models.PositiveSmallIntegerField(
        default=5, validators=[MinValueValidator(1), MaxValueValidator(50)]
    )
    widened_top_k = models.PositiveSmallIntegerField(
        default=15, validators=[MinValueValidator(1), MaxValueValidator(50)]
    )
    per_resource_k = models.PositiveSmallIntegerField(
        default=3, validators=[MinValueValidator(1), MaxValueValidator(20)]
    )
    # Sessions idle for longer are deleted by the retention task; null keeps them.
    retention_days = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(36500)]
    )
    on_generation_unavailable = models.CharField(
        max_length=12, choices=GenerationFallback.choices, default=GenerationFallback.EXTRACTIVE
    )
    # What a turn answers when the documents do not (grounding "none"), and
    # what a greeting or a thank-you gets (chat/services/turn/decide.py).
    # English's built-in texts (languages/en/texts.py) until the workspace words its own.
    no_answer_text = models.CharField(max_length=2000, default=ENGLISH.texts.no_answer_text)
    small_talk_text = models.CharField(max_length=2000, default=ENGLISH.texts.small_talk_text)
    # The workspace's own texts per language ({"fa": {"no_answer_text": …}}):
    # a turn in that language takes them before the single texts above and
    # the built-in ones (workspaces/texts.py, chat/wording.py).
    texts = models.JSONField(
        default=dict,
        blank=True,
        validators=[texts_validate],
        help_text='Own texts per language, e.g. {"fa": {"no_answer_text": "…", "small_talk_text": "…"}}. '
        "Languages: en, fa, ar, de, fr; texts: no_answer_text, small_talk_text, no_documents_text, "
        "which_one, form_title. A language or text left out gets the single text above (no answer, "
        "small talk) when it was changed, else the built-in text of the question's language.",
    )
    # The metadata keys its resources may carry, with their types
    # ({"year": "number"}); empty: any (workspaces/metadata_keys.py).
    metadata_keys = models.JSONField(
        default=dict,
        blank=True,
        validators=[metadata_keys_validate],
        help_text='Declared metadata keys and their types, e.g. {"customer": "string", "year": "number"}. '
        "Types: string, number, boolean, date, list. When set, a resource's metadata may hold only these "
        "keys, each of its type. Empty: any key.",
    )
    # The least answerability score (the best sentence's closeness to the
    # question, 0..1) for which the documents are taken to answer; below it the
    # reply is no_answer_text. Fitted on MTRAG-UN dev and SciFact (docs/prompting.md).
    answerability_threshold = models.FloatField(
        default=DEFAULT_ANSWERABILITY_THRESHOLD, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)]
    )
    # Browser origins ("https://shop.example") allowed to call the end-user
    # routes with an end-user token (CORS, workspaces/cors.py).
    allowed_origins = ArrayField(
        models.CharField(max_length=ORIGIN_MAX_LENGTH),
        blank=True,
        default=list,
        validators=[origins_validate],
        help_text="Origins (scheme://host[:port], no path, no wildcard) whose pages may call the "
        "end-user routes with an end-user token (CORS). Empty: none.",
    )
    # The secret that signs end-user tokens (HS256), encrypted with a key
    # derived from API_KEY_HASH_SECRET (workspaces/tokens.py): it must be
    # readable to verify, but a database dump alone must not mint tokens.
    # Empty until the first token or signing-secret request.
    token_secret = models.TextField(blank=True, default="", editable=False)
    # The secret before the last rotation, still accepted until
    # token_secret_previous_until (the rotation's grace period).
    token_secret_previous = models.TextField(blank=True, default="", editable=False)
    token_secret_previous_until = models.DateTimeField(null=True, blank=True, editable=False)
    token_secret_rotated_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The model its passages' vectors are of, which its searches embed the
    # query with. When EMBEDDING_MODEL_NAME changes, it stays until the
    # workspace's passages are all embedded again by the new model, then
    # switches in the transaction that swaps the vectors (retrieval/reembedding.py).
    embedding_model = models.CharField(max_length=200, default=configured_embedding_model, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            # Workspace list of an organization, oldest first (keyset pagination).
            models.Index(fields=["organization", "created_at", "id"], name="workspace_org_created_idx"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(top_k__gte=1, top_k__lte=50), name="workspace_top_k_range"
            ),
            models.CheckConstraint(
                condition=models.Q(widened_top_k__gte=1, widened_top_k__lte=50),
                name="workspace_widened_top_k_range",
            ),
            models.CheckConstraint(
                condition=models.Q(per_resource_k__gte=1, per_resource_k__lte=20),
                name="workspace_per_resource_k_range",
            ),
            models.CheckConstraint(
                condition=models.Q(history_turns__lte=100), name="workspace_history_turns_range"
            ),
            models.CheckConstraint(
                condition=models.Q(answerability_threshold__gte=0, answerability_threshold__lte=1),
                name="workspace_answerability_threshold_range",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class ApiKeyScope(models.TextChoices):
    CHAT = "chat", "chat"
    ADMIN = "admin", "admin"


class ApiKeyQuerySet(models.QuerySet["ApiKey"]):
    def active(self) -> ApiKeyQuerySet:
        return self.filter(revoked_at__isnull=True)


class ApiKey(models.Model):
    """An integrator's credential. Only a keyed hash and a display prefix are stored."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=200)
    scope = models.CharField(max_length=10, choices=ApiKeyScope.choices, default=ApiKeyScope.CHAT)
    # HMAC-SHA256 of the plaintext (hex). Unique: the authentication lookup.
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    # First characters of the key, enough to recognise it in a list.
    prefix = models.CharField(max_length=16, editable=False)
    # Workspaces this key may use; empty means every workspace of the
    # organization. Kept on the row so authentication stays one query.
    allowed_workspace_ids = ArrayField(models.UUIDField(), blank=True, default=list)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    # DRF stores the authenticated key as ``request.user`` as well.
    is_authenticated = True

    @property
    def is_admin(self) -> bool:
        return self.scope == ApiKeyScope.ADMIN

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def allows_workspace(self, workspace_id: uuid.UUID) -> bool:
        return not self.allowed_workspace_ids or workspace_id in self.allowed_workspace_ids


class IdempotencyState(models.TextChoices):
    IN_PROGRESS = "in_progress", "in progress"
    DONE = "done", "done"
    # Failed after it created something (a chat turn's question): a retry
    # with the same key continues it instead of starting over.
    RESUMABLE = "resumable", "resumable"


class IdempotencyRecord(models.Model):
    """The outcome of a creating POST sent with an ``Idempotency-Key``, kept
    for 24 hours per (API key, key) — or per (workspace, end user, key) for a
    request with an end-user token — and replayed to a retry (workspaces/idempotency.py).

    A record that holds an end user's data (a chat turn's question and answer,
    a feedback comment) names the end user and the session: it is deleted
    with them, so a replay never brings deleted data back."""

    # The owner: an API key, or (a request with an end-user token: no key)
    # the workspace's end user below.
    api_key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="+", null=True)
    key = models.CharField(max_length=255)
    # The workspace of a workspace-scoped request (deleted with it), and the
    # end user and session whose data the stored response holds.
    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    external_user_id = models.CharField(max_length=255, blank=True, default="")
    session_id = models.UUIDField(null=True, blank=True)
    # SHA-256 of the method, path and body: the same key with another body is refused.
    fingerprint = models.CharField(max_length=64)
    state = models.CharField(max_length=12, choices=IdempotencyState.choices)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    body = models.JSONField(null=True, blank=True)
    # What a failed chat turn created ({"session_id", "question_id", "created"}:
    # chat.services.turn.TurnResume).
    resume = models.JSONField(null=True, blank=True)
    # An in-progress claim lapses after this (its process died).
    locked_until = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["api_key", "key"], name="idempotency_unique_key"),
            models.UniqueConstraint(
                fields=["workspace", "external_user_id", "key"],
                condition=models.Q(api_key__isnull=True),
                name="idempotency_unique_end_user_key",
            ),
            # An owner: an API key, or (an end-user token's) a workspace's end user.
            models.CheckConstraint(
                condition=models.Q(api_key__isnull=False) | models.Q(workspace__isnull=False),
                name="idempotency_has_owner",
            ),
        ]
        indexes = [
            # The cleanup of expired records.
            models.Index(fields=["expires_at"], name="idempotency_expires_idx"),
            # Deleting an end user's data (DELETE …/end-users/{id}/) and a session's.
            models.Index(fields=["workspace", "external_user_id"], name="idempotency_end_user_idx"),
            models.Index(fields=["session_id"], name="idempotency_session_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.state})"


class StaffMembership(models.Model):
    """Limits one staff account of the admin console to one organization.

    Staff accounts without a membership see every organization; superusers
    are never limited (``workspaces.staff``). Deleting the organization keeps
    the row with no organization: the account then sees nothing until a
    superuser changes it, rather than falling back to seeing everything.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="staff_membership"
    )
    organization = models.ForeignKey(
        Organization, on_delete=models.SET_NULL, null=True, related_name="staff_memberships"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "staff membership"

    def __str__(self) -> str:
        return f"{self.user} in {self.organization or 'no organization'}"


# Registered with this app from their own module (workspaces/webhooks/models.py).
from workspaces.webhooks.models import DeliveryStatus as DeliveryStatus  # noqa: E402
from workspaces.webhooks.models import WebhookDelivery as WebhookDelivery  # noqa: E402
from workspaces.webhooks.models import WebhookEndpoint as WebhookEndpoint  # noqa: E402
from workspaces.webhooks.models import WebhookEvent as WebhookEvent  # noqa: E402
