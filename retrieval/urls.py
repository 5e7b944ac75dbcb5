from __future__ import annotations

from django.urls import URLPattern, path

from retrieval import apis

# Included under /api/v1/workspaces/<uuid:workspace_id>/.
urlpatterns: list[URLPattern] = [
    path("search/", apis.SearchApi.as_view(), name="workspace-search"),
]
