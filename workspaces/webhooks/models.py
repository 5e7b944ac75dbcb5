"""Webhook endpoints and the delivery outbox.

Imported by ``workspaces.models`` (Django registers them with the app);
this module names the workspace by its label only, so that the two never
import each other.
"""

from __future__ import annotations

import uuid

from django.contrib.postgres.fields import ArrayField
from django.db import models


class WebhookEvent(models.TextChoices):
    RESOURCE_READY = "resource.ready", "a resource became ready"
    RESOURCE_FAILED = "resource.failed", "a resource's ingestion failed"
    RESOURCE_DELETED = "resource.deleted", "a resource was deleted"
    FEEDBACK_CREATED = "feedback.created", "an end user rated an answer"
    SOURCE_SYNC_COMPLETED = "source.sync.completed", "a web source's sync ended completed or partial"
    SOURCE_SYNC_FAILED = "source.sync.failed", "a web source's sync failed"


class WebhookEndpoint(models.Model):
    """Where a workspace's events are posted, signed with the endpoint's secret."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey("workspaces.Workspace", on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=2000)
    description = models.CharField(max_length=200, blank=True, default="")
    # The event types it receives; empty: every type.
    events = ArrayField(
        models.CharField(max_length=64, choices=WebhookEvent.choices), blank=True, default=list
    )
    enabled = models.BooleanField(default=True)
    # whsec_… encrypted with a key derived from API_KEY_HASH_SECRET
    # (workspaces/webhooks/signing.py): signing needs the secret itself, but a
    # database dump alone must not let anyone forge deliveries.
    secret = models.TextField(editable=False)
    secret_rotated_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            # The endpoint list of a workspace, oldest first (keyset pagination).
            models.Index(fields=["workspace", "created_at", "id"], name="webhook_ws_created_idx"),
        ]

    def __str__(self) -> str:
        return self.url

    def receives(self, event_type: str) -> bool:
        return not self.events or event_type in self.events


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "pending"
    DELIVERED = "delivered", "delivered"
    FAILED = "failed", "failed"


class WebhookDelivery(models.Model):
    """One event for one endpoint: written in the transaction of the change
    it reports (a transactional outbox), posted by the worker."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    event_type = models.CharField(max_length=64, choices=WebhookEvent.choices)
    # The webhook-id header: the same for every attempt and every redelivery,
    # so a receiver can drop duplicates.
    event_id = models.CharField(max_length=64)
    payload = models.JSONField()
    # What the event is about (a resource's id, a message's): deliveries of
    # one endpoint about one subject are posted in the order they were made.
    subject_id = models.CharField(max_length=64, blank=True, default="")
    status = models.CharField(max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True, default="")
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "webhook deliveries"
        indexes = [
            # The delivery log of an endpoint, newest first (keyset pagination).
            models.Index(fields=["endpoint", "-created_at", "-id"], name="webhook_delivery_log_idx"),
            # The sweep: pending deliveries that are due.
            models.Index(
                fields=["next_attempt_at"],
                condition=models.Q(status="pending"),
                name="webhook_delivery_due_idx",
            ),
            # The order per subject: an earlier pending delivery of the same endpoint and subject.
            models.Index(
                fields=["endpoint", "subject_id", "created_at"],
                condition=models.Q(status="pending"),
                name="webhook_delivery_order_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} {self.event_id} ({self.status})"
