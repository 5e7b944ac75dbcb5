"""A workspace's webhook endpoints and their delivery log (status,
attempts, last error, next attempt), with "Redeliver" per delivery (a new
delivery of the same event, posted now)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from console.views.common import REDELIVER, VIEW_WEBHOOKS, page_context, workspace_view
from workspaces.models import WebhookDelivery, Workspace
from workspaces.webhooks.services import webhook_list, webhook_redeliver

# The newest deliveries listed (the API pages through them all).
DELIVERIES_SHOWN = 100


@require_GET
@workspace_view(VIEW_WEBHOOKS)
def webhooks(request: HttpRequest, workspace: Workspace) -> HttpResponse:
    deliveries = (
        WebhookDelivery.objects.filter(endpoint__workspace=workspace)
        .select_related("endpoint")
        .order_by("-created_at", "-id")
    )
    context = page_context(request, workspace, tab="webhooks", title=f"Webhooks: {workspace.name}")
    context.update(
        {
            "endpoints": list(webhook_list(workspace=workspace)),
            "deliveries": list(deliveries[:DELIVERIES_SHOWN]),
            "can_redeliver": request.user.has_perms(REDELIVER),
        }
    )
    return TemplateResponse(request, "console/webhooks.html", context)


@require_POST
@workspace_view(REDELIVER)
def redeliver(request: HttpRequest, workspace: Workspace, delivery_id: Any) -> HttpResponse:
    delivery = (
        WebhookDelivery.objects.filter(endpoint__workspace=workspace, pk=delivery_id)
        .select_related("endpoint")
        .first()
    )
    if delivery is None:
        raise Http404
    webhook_redeliver(endpoint=delivery.endpoint, delivery_id=delivery.pk)
    messages.success(request, f"Queued again: {delivery.event_type} {delivery.event_id}")
    return HttpResponseRedirect(reverse("console:webhooks", args=[workspace.id]))
