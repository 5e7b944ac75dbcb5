"""Writes and reads of a workspace's webhook endpoints and their deliveries."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from daneshyar.api import uuid_or_404
from daneshyar.exceptions import NotFound, ValidationFailed
from daneshyar.outbound import UnsafeUrl, url_check
from workspaces.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint, Workspace
from workspaces.tasks import webhook_deliveries_enqueue_on_commit
from workspaces.webhooks import signing

MAX_ENDPOINTS_PER_WORKSPACE = 20


@dataclass(frozen=True)
class EndpointWithSecret:
    endpoint: WebhookEndpoint
    secret: str


def _checked_url(url: str) -> str:
    try:
        url_check(url)
    except UnsafeUrl as exc:
        raise ValidationFailed("The request has invalid fields.", fields={"url": [str(exc)]}) from None
    return url


def webhook_list(*, workspace: Workspace) -> QuerySet[WebhookEndpoint]:
    return WebhookEndpoint.objects.filter(workspace=workspace)


def webhook_get(*, workspace: Workspace, webhook_id: object) -> WebhookEndpoint:
    """Another workspace's endpoint, or a malformed id, is a 404 like a missing one."""
    found = WebhookEndpoint.objects.filter(workspace=workspace, id=uuid_or_404(webhook_id)).first()
    if found is None:
        raise NotFound()
    return found


def webhook_create(
    *, workspace: Workspace, url: str, events: Sequence[str] = (), enabled: bool = True, description: str = ""
) -> EndpointWithSecret:
    """A new endpoint with a new secret (the plaintext exists only in the result)."""
    _checked_url(url)
    if WebhookEndpoint.objects.filter(workspace=workspace).count() >= MAX_ENDPOINTS_PER_WORKSPACE:
        raise ValidationFailed(f"A workspace has at most {MAX_ENDPOINTS_PER_WORKSPACE} webhook endpoints.")
    secret = signing.secret_new()
    endpoint = WebhookEndpoint.objects.create(
        workspace=workspace,
        url=url,
        events=list(dict.fromkeys(events)),
        enabled=enabled,
        description=description,
        secret=signing.secret_encrypt(secret),
        secret_rotated_at=timezone.now(),
    )
    return EndpointWithSecret(endpoint, secret)


def webhook_update(
    *,
    endpoint: WebhookEndpoint,
    url: str | None = None,
    events: Sequence[str] | None = None,
    enabled: bool | None = None,
    description: str | None = None,
) -> WebhookEndpoint:
    fields = ["updated_at"]
    if url is not None:
        endpoint.url = _checked_url(url)
        fields.append("url")
    if events is not None:
        endpoint.events = list(dict.fromkeys(events))
        fields.append("events")
    if enabled is not None:
        endpoint.enabled = enabled
        fields.append("enabled")
    if description is not None:
        endpoint.description = description
        fields.append("description")
    endpoint.save(update_fields=fields)
    return endpoint


def webhook_delete(*, endpoint: WebhookEndpoint) -> None:
    """The endpoint and its delivery log; pending deliveries are not posted."""
    endpoint.delete()


def webhook_secret_rotate(*, endpoint: WebhookEndpoint) -> EndpointWithSecret:
    """A new secret at once: every delivery posted from now on is signed with it."""
    secret = signing.secret_new()
    endpoint.secret = signing.secret_encrypt(secret)
    endpoint.secret_rotated_at = timezone.now()
    endpoint.save(update_fields=["secret", "secret_rotated_at", "updated_at"])
    return EndpointWithSecret(endpoint, secret)


def webhook_deliveries(*, endpoint: WebhookEndpoint) -> QuerySet[WebhookDelivery]:
    return WebhookDelivery.objects.filter(endpoint=endpoint)


def webhook_redeliver(*, endpoint: WebhookEndpoint, delivery_id: object) -> WebhookDelivery:
    """A new delivery of the same event (the same ``webhook-id``, so a receiver
    that already has it may drop it), posted now whatever the old one's state."""
    original = WebhookDelivery.objects.filter(endpoint=endpoint, id=uuid_or_404(delivery_id)).first()
    if original is None:
        raise NotFound()
    with transaction.atomic():
        copy = WebhookDelivery.objects.create(
            endpoint=endpoint,
            event_type=original.event_type,
            event_id=original.event_id,
            payload=original.payload,
            status=DeliveryStatus.PENDING,
            next_attempt_at=timezone.now(),
        )
        webhook_deliveries_enqueue_on_commit([copy.pk])
    return copy
