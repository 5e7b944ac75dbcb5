"""Routes of the workspaces app, relative to /api/v1/."""

from __future__ import annotations

from django.urls import URLPattern, path

from workspaces import apis
from workspaces.webhooks import apis as webhook_apis

urlpatterns: list[URLPattern] = [
    path("workspaces/", apis.WorkspaceListCreateApi.as_view(), name="workspace-list"),
    path("workspaces/<uuid:workspace_id>/", apis.WorkspaceDetailApi.as_view(), name="workspace-detail"),
    path(
        "workspaces/<uuid:workspace_id>/signing-secret/",
        apis.SigningSecretApi.as_view(),
        name="workspace-signing-secret",
    ),
    path(
        "workspaces/<uuid:workspace_id>/webhooks/", webhook_apis.WebhookListApi.as_view(), name="webhook-list"
    ),
    path(
        "workspaces/<uuid:workspace_id>/webhooks/<uuid:webhook_id>/",
        webhook_apis.WebhookDetailApi.as_view(),
        name="webhook-detail",
    ),
    path(
        "workspaces/<uuid:workspace_id>/webhooks/<uuid:webhook_id>/rotate-secret/",
        webhook_apis.WebhookRotateSecretApi.as_view(),
        name="webhook-rotate-secret",
    ),
    path(
        "workspaces/<uuid:workspace_id>/webhooks/<uuid:webhook_id>/deliveries/",
        webhook_apis.WebhookDeliveryListApi.as_view(),
        name="webhook-deliveries",
    ),
    path(
        "workspaces/<uuid:workspace_id>/webhooks/<uuid:webhook_id>/deliveries/<uuid:delivery_id>/redeliver/",
        webhook_apis.WebhookRedeliverApi.as_view(),
        name="webhook-redeliver",
    ),
]
