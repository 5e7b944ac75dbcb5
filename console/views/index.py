"""The console's start page: the workspaces this account may curate."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from console.views.common import workspace_tabs
from workspaces.staff import staff_scope, staff_workspace_list

# More workspaces than this are reached from the workspace list of the admin.
INDEX_LIMIT = 500


def _workspace_index(request: HttpRequest) -> HttpResponse:
    workspaces = list(
        staff_workspace_list(user=request.user).order_by("organization__name", "name", "id")[
            : INDEX_LIMIT + 1
        ]
    )
    rows = [{"workspace": w, "tabs": workspace_tabs(request, w)} for w in workspaces[:INDEX_LIMIT]]
    context = {
        **admin.site.each_context(request),
        "title": "Curation console",
        "rows": rows,
        "truncated": len(workspaces) > INDEX_LIMIT,
        "limited": staff_scope(request.user).limited,
    }
    return TemplateResponse(request, "console/index.html", context)


workspace_index = admin.site.admin_view(_workspace_index)
