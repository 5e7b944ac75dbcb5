"""The URLconf: each app's routes included by name, so the project package
imports no app (docs/architecture.md)."""

from __future__ import annotations

from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from daneshyar import health

# Each module lists its routes relative to /api/v1/.
API_URLCONFS = (
    "workspaces.urls",
    "resources.urls",
    "retrieval.urls",
    "chat.urls",
    "chat.openai_api.urls",
    "chat.mcp_server.urls",
    "chat.transcripts.urls",
    "evaluations.urls",
)

api_v1: list[URLPattern | URLResolver] = [path("", include(module)) for module in API_URLCONFS]

urlpatterns = [
    path("api/v1/", include(api_v1)),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    # The curation console: pages inside the admin (same login), by name.
    path("admin/console/", include("console.urls")),
    path("admin/", admin.site.urls),
    # The embeddable chat's demo page (local runs only; the widget itself is
    # the static file daneshyar/chat.js).
    path("widget/", include("widget.urls")),
]

handler400 = "daneshyar.exceptions.handler400"
handler403 = "daneshyar.exceptions.handler403"
handler404 = "daneshyar.exceptions.handler404"
handler500 = "daneshyar.exceptions.handler500"
