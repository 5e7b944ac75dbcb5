"""The demo page of the widget, for local runs only.

``make run`` sets ``WIDGET_DEMO_WORKSPACE`` to the demo workspace; without it
(any other deployment) both views are 404. The page never sees a key: its
token provider is ``demo_token``, a same-origin view that mints a short-lived
end-user token on the server for a random end user kept in this browser's
session, the way an integrator's own backend would for its signed-in user.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from daneshyar.api import timestamp
from workspaces.models import Workspace
from workspaces.tokens import end_user_token_mint

DEMO_TOKEN_TTL_SECONDS = 900


def _demo_workspace() -> Workspace:
    workspace_id = settings.WIDGET_DEMO_WORKSPACE
    workspace = Workspace.objects.filter(pk=workspace_id).first() if workspace_id else None
    if workspace is None:
        raise Http404()
    return workspace


@require_GET
def demo_page(request: HttpRequest) -> HttpResponse:
    workspace = _demo_workspace()
    rtl = request.GET.get("dir") == "rtl"
    context = {
        "workspace_id": str(workspace.id),
        "lang": "fa" if request.GET.get("lang") == "fa" else "en",
        "dir": "rtl" if rtl else "ltr",
    }
    return render(request, "widget/demo.html", context)


# Exempt from CSRF: a cross-site POST gains nothing, since without CORS on
# this route another site cannot read the token in the answer.
@csrf_exempt
@never_cache
@require_POST
def demo_token(request: HttpRequest) -> JsonResponse:
    workspace = _demo_workspace()
    user = request.session.get("widget_demo_user")
    if not isinstance(user, str):
        user = f"demo-{secrets.token_hex(6)}"
        request.session["widget_demo_user"] = user
    minted = end_user_token_mint(
        workspace=workspace, external_user_id=user, ttl_seconds=DEMO_TOKEN_TTL_SECONDS
    )
    return JsonResponse({"token": minted.token, "expires_at": timestamp(minted.expires_at)})
