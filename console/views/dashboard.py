"""A workspace's dashboard (console/dashboard.py builds it)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET

from console.dashboard import WINDOW_DAYS, workspace_dashboard
from console.views.common import EDIT_TEST_SETS, VIEW_DASHBOARD, page_context, workspace_view
from workspaces.models import Workspace


@require_GET
@workspace_view(VIEW_DASHBOARD)
def dashboard(request: HttpRequest, workspace: Workspace) -> HttpResponse:
    include_console = request.GET.get("include_console") in ("1", "true", "on")
    context = page_context(request, workspace, tab="dashboard", title=f"Dashboard: {workspace.name}")
    context["dashboard"] = workspace_dashboard(workspace=workspace, include_console=include_console)
    context["window_days"] = WINDOW_DAYS
    context["can_add_items"] = request.user.has_perms(EDIT_TEST_SETS)
    return TemplateResponse(request, "console/dashboard.html", context)
