"""Ingestion progress of a workspace: upload many files or zips, watch them
go through (the page polls ``progress_status``, console/static/console/progress.js),
retry failures.

The upload and retry forms work without the script too (they post and come
back here); with it, each file is sent in its own request, so a batch is
never refused as one over-limit body, and nothing reloads the page.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from console.progress import workspace_progress
from console.uploads import UploadResult, upload_store
from console.views.common import RETRY, UPLOAD, VIEW_PROGRESS, page_context, workspace_view
from daneshyar.exceptions import error_response
from resources import services
from resources.selectors import resource_get
from workspaces.models import Workspace


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


def _status_context(request: HttpRequest, workspace: Workspace) -> dict[str, Any]:
    return {
        "workspace": workspace,
        "progress": workspace_progress(workspace=workspace),
        "can_retry": request.user.has_perms(RETRY),
    }


@require_GET
@workspace_view(VIEW_PROGRESS)
def progress(request: HttpRequest, workspace: Workspace) -> HttpResponse:
    context = page_context(request, workspace, tab="progress", title=f"Ingestion: {workspace.name}")
    context.update(_status_context(request, workspace))
    context["can_upload"] = request.user.has_perms(UPLOAD)
    context["status_url"] = reverse("console:progress-status", args=[workspace.id])
    return TemplateResponse(request, "console/progress.html", context)


@require_GET
@workspace_view(VIEW_PROGRESS)
def progress_status(request: HttpRequest, workspace: Workspace) -> JsonResponse:
    """The counts and the rendered status section, for the page to swap in."""
    context = _status_context(request, workspace)
    state = context["progress"]
    return JsonResponse(
        {
            "counts": state.counts,
            "total": state.total,
            "finished": state.finished,
            "percent": state.percent,
            "done": state.done,
            "html": render_to_string("console/progress_status.html", context, request=request),
        },
        headers={"Cache-Control": "no-store"},
    )


@require_POST
@workspace_view(UPLOAD)
def upload(request: HttpRequest, workspace: Workspace) -> HttpResponse:
    files = request.FILES.getlist("files")
    results: list[UploadResult] = []
    for uploaded in files:
        if (uploaded.size or 0) > settings.MAX_UPLOAD_BYTES:
            message = (
                f"The file is {uploaded.size:,} bytes; the limit is {settings.MAX_UPLOAD_BYTES:,} bytes."
            )
            results.append(UploadResult(uploaded.name or "upload", "refused", message))
            continue
        results += upload_store(
            workspace=workspace,
            filename=uploaded.name or "",
            data=uploaded.read(),
            claimed_type=uploaded.content_type or "",
        )
    if _wants_json(request):
        if not files:
            message = "Choose at least one file."
            return error_response(400, "validation_error", message, {"files": [message]})
        return JsonResponse({"status": "ok", "data": {"results": [r.as_json() for r in results]}})
    if not files:
        messages.error(request, "Choose at least one file.")
    for result in results:
        _report(request, result)
    return HttpResponseRedirect(reverse("console:progress", args=[workspace.id]))


def _report(request: HttpRequest, result: UploadResult) -> None:
    if result.outcome == "created":
        messages.success(request, f"Queued for ingestion: {result.name}")
    elif result.outcome == "existing":
        messages.warning(request, f"Already in this workspace: {result.name}")
    else:
        messages.error(request, f"Refused {result.name}: {result.message}")


@require_POST
@workspace_view(RETRY)
def retry(request: HttpRequest, workspace: Workspace, resource_id: Any) -> HttpResponse:
    resource = resource_get(workspace=workspace, resource_id=resource_id)
    services.resource_reingest(resource=resource)
    if _wants_json(request):
        return JsonResponse({"status": "ok", "data": {"resource_id": str(resource.id)}}, status=202)
    messages.success(request, f"Queued for ingestion again: {resource.title}")
    return HttpResponseRedirect(reverse("console:progress", args=[workspace.id]))
