from __future__ import annotations

from django.urls import URLPattern, path

from resources import apis

urlpatterns: list[URLPattern] = [
    path("resources/", apis.ResourceListCreateApi.as_view(), name="resource-list"),
    path("resources/<uuid:resource_id>/", apis.ResourceDetailApi.as_view(), name="resource-detail"),
    path(
        "resources/<uuid:resource_id>/reingest/",
        apis.ResourceReingestApi.as_view(),
        name="resource-reingest",
    ),
    path(
        "resources/<uuid:resource_id>/passages/",
        apis.ResourcePassageListApi.as_view(),
        name="resource-passages",
    ),
]
