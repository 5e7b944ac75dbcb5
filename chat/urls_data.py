"""Transcript export, end-user data and feedback routes, under workspaces/<uuid:workspace_id>/."""

from __future__ import annotations

from django.urls import URLPattern, path

from chat import transcript_apis

urlpatterns: list[URLPattern] = [
    path("transcripts/", transcript_apis.TranscriptExportApi.as_view(), name="transcript-export"),
    # <path:...>: an external_user_id may contain "/" (URL-encoded or not).
    path(
        "end-users/<path:external_user_id>/",
        transcript_apis.EndUserDeleteApi.as_view(),
        name="end-user-delete",
    ),
    path(
        "sessions/<uuid:session_id>/messages/<uuid:message_id>/feedback/",
        transcript_apis.FeedbackApi.as_view(),
        name="message-feedback",
    ),
]
