"""Routes of the workspaces app, relative to /api/v1/."""

from __future__ import annotations

from django.urls import URLPattern, path

from workspaces import apis

urlpatterns: list[URLPattern] = [
    path("workspaces/", apis.WorkspaceListCreateApi.as_view(), name="workspace-list"),
    path("workspaces/<uuid:workspace_id>/", apis.WorkspaceDetailApi.as_view(), name="workspace-detail"),
    path(
        "workspaces/<uuid:workspace_id>/signing-secret/",
        apis.SigningSecretApi.as_view(),
        name="workspace-signing-secret",
    ),
]
