"""One passage as retrieval holds it: where a citation leads."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET

from console.views.common import VIEW_PASSAGE, page_context, workspace_view
from retrieval.selectors import passage_get
from workspaces.models import Workspace


@require_GET
@workspace_view(VIEW_PASSAGE)
def passage(request: HttpRequest, workspace: Workspace, passage_id: Any) -> HttpResponse:
    # A passage replaced by a reingestion is a 404: citations keep the old id.
    found = passage_get(workspace=workspace, passage_id=passage_id)
    context = page_context(
        request, workspace, tab="", title=f"Passage {found.ordinal + 1} of {found.resource.title}"
    )
    context["passage"] = found
    return TemplateResponse(request, "console/passage.html", context)
