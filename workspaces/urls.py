"""Routes of the workspaces app, relative to /api/v1/."""

from __future__ import annotations

from django.urls import URLPattern, path

from daneshyar.api import WORKSPACE_ROUTE
from workspaces import apis
from workspaces.webhooks import apis as webhook_apis

WEBHOOK = f"{WORKSPACE_ROUTE}webhooks/<uuid:webhook_id>/"

urlpatterns: list[URLPattern] = [
    path("workspaces/", apis.WorkspaceListCreateApi.as_view(), name="workspace-list"),
    path(WORKSPACE_ROUTE, apis.WorkspaceDetailApi.as_view(), name="workspace-detail"),
    path(
        f"{WORKSPACE_ROUTE}signing-secret/", apis.SigningSecretApi.as_view(), name="workspace-signing-secret"
    ),
    path(f"{WORKSPACE_ROUTE}webhooks/", webhook_apis.WebhookListApi.as_view(), name="webhook-list"),
    path(WEBHOOK, webhook_apis.WebhookDetailApi.as_view(), name="webhook-detail"),
    path(
        f"{WEBHOOK}rotate-secret/",
        webhook_apis.WebhookRotateSecretApi.as_view(),
        name="webhook-rotate-secret",
    ),
    path(f"{WEBHOOK}deliveries/", webhook_apis.WebhookDeliveryListApi.as_view(), name="webhook-deliveries"),
    path(
        f"{WEBHOOK}deliveries/<uuid:delivery_id>/redeliver/",
        webhook_apis.WebhookRedeliverApi.as_view(),
        name="webhook-redeliver",
    ),
]
