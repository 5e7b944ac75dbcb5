"""Routes of the transcript wing, relative to /api/v1/."""

from __future__ import annotations

from django.urls import URLPattern, path

from chat.transcripts import apis
from daneshyar.api import WORKSPACE_ROUTE

urlpatterns: list[URLPattern] = [
    path(f"{WORKSPACE_ROUTE}transcripts/", apis.TranscriptExportApi.as_view(), name="transcript-export"),
    # <path:...>: an external_user_id may contain "/" (URL-encoded or not).
    path(
        f"{WORKSPACE_ROUTE}end-users/<path:external_user_id>/",
        apis.EndUserDeleteApi.as_view(),
        name="end-user-delete",
    ),
]
