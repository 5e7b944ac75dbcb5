"""One passage as retrieval holds it, where a citation leads, and the page
it sits on drawn as an image."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_GET

from console.page_figures import page_figure
from console.views.common import VIEW_PASSAGE, page_context, workspace_view
from daneshyar.exceptions import NotFound, error_response
from resources.page_images import resource_page_png
from resources.selectors import resource_get
from retrieval.selectors import passage_get
from workspaces.models import Workspace

# A page's image changes only when its document's bytes are replaced (an
# upload with the same external id): a browser keeps it a few minutes, no
# shared cache keeps it at all.
PAGE_IMAGE_MAX_AGE = 300


@require_GET
@workspace_view(VIEW_PASSAGE)
def passage(request: HttpRequest, workspace: Workspace, passage_id: Any) -> HttpResponse:
    # A passage replaced by a reingestion is a 404: citations keep the old id.
    found = passage_get(workspace=workspace, passage_id=passage_id)
    context = page_context(
        request, workspace, tab="", title=f"Passage {found.ordinal + 1} of {found.resource.title}"
    )
    context["passage"] = found
    context["figure"] = page_figure(
        workspace_id=workspace.id, resource_id=found.resource_id, page=found.page, bbox=found.bbox
    )
    return TemplateResponse(request, "console/passage.html", context)


@require_GET
@workspace_view(VIEW_PASSAGE)
def page_image(request: HttpRequest, workspace: Workspace, resource_id: Any, page: int) -> HttpResponse:
    """Page ``page`` of the resource as a PNG; the same access as its passages'."""
    # Another workspace's resource is the plain 404 of workspace_view.
    resource = resource_get(workspace=workspace, resource_id=resource_id)
    try:
        png = resource_page_png(resource=resource, page=page)
    except NotFound as exc:  # which page is missing, and why, in the envelope
        return error_response(404, exc.code, exc.message, path=request.path)
    response = HttpResponse(png, content_type="image/png")
    patch_cache_control(response, private=True, max_age=PAGE_IMAGE_MAX_AGE)
    return response
