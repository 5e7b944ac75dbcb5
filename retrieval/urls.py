"""Routes of the retrieval app, relative to /api/v1/."""

from __future__ import annotations

from django.urls import URLPattern, path

from daneshyar.api import WORKSPACE_ROUTE
from retrieval import apis

urlpatterns: list[URLPattern] = [
    path(f"{WORKSPACE_ROUTE}search/", apis.SearchApi.as_view(), name="workspace-search"),
    path(
        f"{WORKSPACE_ROUTE}resources/<uuid:resource_id>/passages/",
        apis.PassageListApi.as_view(),
        name="resource-passages",
    ),
]
