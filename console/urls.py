"""Routes of the curation console, under /admin/console/ (daneshyar/urls.py)."""

from __future__ import annotations

from django.urls import URLPattern, path

from console.views import (
    dashboard,
    evaluations,
    index,
    passages,
    playground,
    progress,
    sources,
    transcripts,
    webhooks,
)

app_name = "console"

WORKSPACE = "<uuid:workspace_id>/"

urlpatterns: list[URLPattern] = [
    path("", index.workspace_index, name="index"),
    path(f"{WORKSPACE}dashboard/", dashboard.dashboard, name="dashboard"),
    path(f"{WORKSPACE}playground/", playground.playground, name="playground"),
    path(f"{WORKSPACE}ingestion/", progress.progress, name="progress"),
    path(f"{WORKSPACE}ingestion/status/", progress.progress_status, name="progress-status"),
    path(f"{WORKSPACE}ingestion/upload/", progress.upload, name="upload"),
    path(f"{WORKSPACE}ingestion/<uuid:resource_id>/retry/", progress.retry, name="retry"),
    path(f"{WORKSPACE}transcripts/", transcripts.transcript_search, name="transcripts"),
    path(f"{WORKSPACE}transcripts/<uuid:session_id>/", transcripts.transcript, name="transcript"),
    path(f"{WORKSPACE}passages/<uuid:passage_id>/", passages.passage, name="passage"),
    path(
        f"{WORKSPACE}resources/<uuid:resource_id>/pages/<int:page>.png",
        passages.page_image,
        name="page-image",
    ),
    path(f"{WORKSPACE}sources/", sources.sources, name="sources"),
    path(f"{WORKSPACE}sources/<uuid:source_id>/sync/", sources.sync_now, name="source-sync"),
    path(f"{WORKSPACE}webhooks/", webhooks.webhooks, name="webhooks"),
    path(
        f"{WORKSPACE}webhooks/deliveries/<uuid:delivery_id>/redeliver/", webhooks.redeliver, name="redeliver"
    ),
    *evaluations.urlpatterns,
]
