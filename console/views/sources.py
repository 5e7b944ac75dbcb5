"""A workspace's web sources: each with its schedule and last run, the
recent runs with their status and counts, and "Sync now" (a new run, queued
for the worker; refused while one runs: one running run per source)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from console.views.common import SYNC_SOURCE, VIEW_SOURCES, page_context, workspace_view
from resources.models import SourceRun
from resources.sources import services
from workspaces.models import Workspace

# The newest runs listed (the API pages through them all).
RUNS_SHOWN = 50


def schedule_text(seconds: int | None) -> str:
    """``every 6 h``, ``every 30 min``, or ``on demand``."""
    if not seconds:
        return "on demand"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds % size == 0:
            return f"every {seconds // size} {unit}"
    return f"every {seconds} s"


@require_GET
@workspace_view(VIEW_SOURCES)
def sources(request: HttpRequest, workspace: Workspace) -> HttpResponse:
    # Each source's newest run only (a sliced prefetch: one query, a window function).
    newest = SourceRun.objects.order_by("-started_at", "-id")[:1]
    listed = services.source_list(workspace=workspace).prefetch_related(
        Prefetch("runs", queryset=newest, to_attr="newest_runs")
    )
    rows: list[dict[str, Any]] = [
        {
            "source": source,
            "schedule": schedule_text(source.schedule_seconds),
            "last": source.newest_runs[0] if source.newest_runs else None,  # type: ignore[attr-defined]
        }
        for source in listed
    ]
    recent = (
        SourceRun.objects.filter(source__workspace=workspace)
        .select_related("source")
        .order_by("-started_at", "-id")
    )
    context = page_context(request, workspace, tab="sources", title=f"Sources: {workspace.name}")
    context.update(
        {"rows": rows, "runs": list(recent[:RUNS_SHOWN]), "can_sync": request.user.has_perms(SYNC_SOURCE)}
    )
    return TemplateResponse(request, "console/sources.html", context)


@require_POST
@workspace_view(SYNC_SOURCE)
def sync_now(request: HttpRequest, workspace: Workspace, source_id: Any) -> HttpResponse:
    source = services.source_get(workspace=workspace, source_id=source_id)
    try:
        services.source_sync_start(source=source)
        messages.success(request, f"Sync queued: {source.urls[0] if source.urls else source.id}")
    except services.SyncRunning:
        messages.warning(request, "A sync of this source is already running.")
    return HttpResponseRedirect(reverse("console:sources", args=[workspace.id]))
