"""What every console page does first.

The admin's own login and staff check (``admin.site.admin_view``: anyone
else is sent to the login page), then the workspace, which is a 404 when it
is outside the staff account's organizations (``workspaces.staff``) exactly
as when it does not exist, then the page's model permissions (403). The
workspace comes before the permission, as in the API, so that a 403 never
tells an account that another organization's workspace exists. A row the
page asks a selector for (a session, a passage, a resource) that is not in
the workspace is a 404 too (the selector's ``NotFound``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any, Concatenate, ParamSpec

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse

from daneshyar.exceptions import NotFound
from workspaces.models import Workspace
from workspaces.staff import staff_workspace_get

P = ParamSpec("P")

# Model permissions each page needs (superusers have them all).
VIEW_DASHBOARD = ("chat.view_session",)
VIEW_TRANSCRIPTS = ("chat.view_session",)
USE_PLAYGROUND = ("chat.add_session",)
VIEW_PROGRESS = ("resources.view_resource",)
UPLOAD = ("resources.add_resource",)
RETRY = ("resources.change_resource",)
VIEW_PASSAGE = ("retrieval.view_passage",)
VIEW_EVALUATIONS = ("evaluations.view_testset",)
EDIT_TEST_SETS = ("evaluations.change_testset",)
START_RUN = ("evaluations.add_evaluationrun",)
VIEW_SOURCES = ("resources.view_source", "resources.view_sourcerun")
SYNC_SOURCE = ("resources.change_source",)
VIEW_WEBHOOKS = ("workspaces.view_webhookendpoint", "workspaces.view_webhookdelivery")
REDELIVER = ("workspaces.change_webhookdelivery",)


def workspace_view(
    permissions: tuple[str, ...],
) -> Callable[[Callable[Concatenate[HttpRequest, Workspace, P], HttpResponse]], Callable[..., HttpResponse]]:
    """Decorate a page ``view(request, workspace, **kwargs)`` of one workspace."""

    def decorate(
        view: Callable[Concatenate[HttpRequest, Workspace, P], HttpResponse],
    ) -> Callable[..., HttpResponse]:
        @wraps(view)
        def inner(request: HttpRequest, workspace_id: Any, *args: P.args, **kwargs: P.kwargs) -> HttpResponse:
            try:
                workspace = staff_workspace_get(user=request.user, workspace_id=workspace_id)
                if not request.user.has_perms(permissions):
                    raise PermissionDenied
                return view(request, workspace, *args, **kwargs)
            except NotFound:
                raise Http404 from None

        return admin.site.admin_view(inner)

    return decorate


@dataclass(frozen=True)
class Tab:
    name: str
    label: str
    url: str


_TABS = (
    ("dashboard", "Dashboard", VIEW_DASHBOARD),
    ("playground", "Playground", USE_PLAYGROUND),
    ("progress", "Ingestion", VIEW_PROGRESS),
    ("transcripts", "Transcripts", VIEW_TRANSCRIPTS),
    ("test-sets", "Test sets", VIEW_EVALUATIONS),
    ("sources", "Sources", VIEW_SOURCES),
    ("webhooks", "Webhooks", VIEW_WEBHOOKS),
)


def workspace_tabs(request: HttpRequest, workspace: Workspace) -> list[Tab]:
    """The workspace's pages this account may open."""
    return [
        Tab(name, label, reverse(f"console:{name}", args=[workspace.id]))
        for name, label, permissions in _TABS
        if request.user.has_perms(permissions)
    ]


def page_context(request: HttpRequest, workspace: Workspace, *, tab: str, title: str) -> dict[str, Any]:
    """The admin's own context (header, navigation, theme) plus the workspace's tabs."""
    return {
        **admin.site.each_context(request),
        "title": title,
        "workspace": workspace,
        "organization": workspace.organization,
        "tab": tab,
        "tabs": workspace_tabs(request, workspace),
    }
