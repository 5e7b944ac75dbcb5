from __future__ import annotations

from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from daneshyar import health
from workspaces import apis as workspace_apis

api_v1: list[URLPattern | URLResolver] = [
    path("workspaces/", workspace_apis.WorkspaceListCreateApi.as_view(), name="workspace-list"),
    path(
        "workspaces/<uuid:workspace_id>/",
        workspace_apis.WorkspaceDetailApi.as_view(),
        name="workspace-detail",
    ),
    path("models/", workspace_apis.ModelListApi.as_view(), name="model-list"),
    path("workspaces/<uuid:workspace_id>/", include("resources.urls")),
    path("workspaces/<uuid:workspace_id>/", include("retrieval.urls")),
    path("workspaces/<uuid:workspace_id>/", include("chat.urls")),
    path("workspaces/<uuid:workspace_id>/", include("chat.urls_data")),
]

urlpatterns = [
    path("api/v1/", include(api_v1)),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("admin/", admin.site.urls),
]

handler400 = "daneshyar.exceptions.handler400"
handler403 = "daneshyar.exceptions.handler403"
handler404 = "daneshyar.exceptions.handler404"
handler500 = "daneshyar.exceptions.handler500"
