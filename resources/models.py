from __future__ import annotations

import uuid

from django.db import models

from workspaces.models import Workspace


class ResourceStatus(models.TextChoices):
    PENDING = "pending", "pending"
    PROCESSING = "processing", "processing"
    READY = "ready", "ready"
    FAILED = "failed", "failed"


class Resource(models.Model):
    """A document uploaded to a workspace, and where its ingestion stands."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="resources")
    title = models.CharField(max_length=500)
    filename = models.CharField(max_length=500, blank=True, default="")
    # Detected from the bytes, not taken from the client.
    content_type = models.CharField(max_length=200)
    size_bytes = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)
    status = models.CharField(max_length=12, choices=ResourceStatus.choices, default=ResourceStatus.PENDING)
    error_code = models.CharField(max_length=64, blank=True, default="")
    error_message = models.TextField(blank=True, default="")
    passage_count = models.PositiveIntegerField(default=0)
    # Ingestion attempts so far; bounded by INGEST_MAX_RETRIES.
    attempts = models.PositiveSmallIntegerField(default=0)
    # When the current state was entered; the sweep re-queues stale ones.
    status_changed_at = models.DateTimeField(auto_now_add=True)
    # Set while an ingestion is queued or running (including a reingest of a
    # ready resource, which stays ready and searchable meanwhile), refreshed
    # as the worker makes progress, cleared when it ends. The sweep re-queues
    # rows whose heartbeat is older than INGEST_STALE_AFTER_SECONDS.
    ingest_heartbeat_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The Celery task whose attempt claimed the resource last: a task takes
    # documents by a fair claim, not by the ids in its message, so its hard
    # time limit and its redelivery find what it held by this.
    ingest_claimed_by = models.CharField(max_length=64, blank=True, default="", editable=False)
    # The integrator's attributes (API.md v1.3): at most 32 keys, each a
    # string, a number, a boolean or a list of strings; searches filter on
    # them inside every leg's SQL (retrieval/search/statements.eligible).
    # Changed without re-embedding.
    metadata = models.JSONField(default=dict, blank=True)
    # Who may read it: None, every end user of the workspace; {"groups":
    # [...]}, only end users holding at least one of these groups.
    access = models.JSONField(null=True, blank=True, default=None)
    # The integrator's id of the document in its source (a page id, a path):
    # an upload naming it replaces that document instead of adding one, and
    # the sync manifest (resources/sync.py) compares by it. "" when not set.
    external_id = models.CharField(max_length=255, blank=True, default="")
    # The source's version of the document, as the integrator names it
    # (a revision number, a modification time); the manifest may compare it
    # instead of the bytes' hash.
    external_version = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # Resource list of a workspace, newest first, optionally by status.
            models.Index(fields=["workspace", "status", "-created_at"], name="resource_ws_status_idx"),
            models.Index(fields=["workspace", "-created_at", "-id"], name="resource_ws_created_idx"),
            # The sweep: resources stuck in pending/processing past a timeout.
            models.Index(
                fields=["status_changed_at"],
                name="resource_unfinished_idx",
                condition=models.Q(status__in=["pending", "processing"]),
            ),
            # The sweep: ingestions (first runs and reingests) with a stale heartbeat.
            models.Index(
                fields=["ingest_heartbeat_at"],
                name="resource_ingest_heartbeat_idx",
                condition=models.Q(ingest_heartbeat_at__isnull=False),
            ),
        ]
        constraints = [
            # Same bytes uploaded twice to one workspace -> the existing resource.
            models.UniqueConstraint(
                fields=["workspace", "sha256"], name="resource_unique_content_per_workspace"
            ),
            # One document per external id in a workspace; also serves the
            # upload's and the manifest's lookups by external id.
            models.UniqueConstraint(
                fields=["workspace", "external_id"],
                name="resource_unique_external_id_per_workspace",
                condition=~models.Q(external_id=""),
            ),
        ]

    def __str__(self) -> str:
        return self.title


class ResourceFile(models.Model):
    """The uploaded bytes, kept in the database so that any worker can read
    them without a shared volume, and out of the ``Resource`` row so that
    listing resources never loads them."""

    resource = models.OneToOneField(Resource, on_delete=models.CASCADE, primary_key=True, related_name="file")
    data = models.BinaryField()

    def __str__(self) -> str:
        return f"file of {self.resource_id}"
