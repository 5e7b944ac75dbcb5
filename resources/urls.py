"""Routes of the resources app, relative to /api/v1/."""

from __future__ import annotations

from django.urls import URLPattern, path

from daneshyar.api import WORKSPACE_ROUTE
from resources import apis, batch_apis, manifest_apis
from resources.sources import apis as source_apis

RESOURCE = f"{WORKSPACE_ROUTE}resources/<uuid:resource_id>/"
SOURCE = f"{WORKSPACE_ROUTE}sources/<uuid:source_id>/"

urlpatterns: list[URLPattern] = [
    path(f"{WORKSPACE_ROUTE}resources/", apis.ResourceListCreateApi.as_view(), name="resource-list"),
    path(f"{WORKSPACE_ROUTE}resources/batch/", batch_apis.ResourceBatchApi.as_view(), name="resource-batch"),
    path(f"{WORKSPACE_ROUTE}sync/", manifest_apis.SyncManifestApi.as_view(), name="sync-manifest"),
    path(f"{WORKSPACE_ROUTE}sync/delete/", manifest_apis.SyncDeleteApi.as_view(), name="sync-delete"),
    path(f"{WORKSPACE_ROUTE}sources/", source_apis.SourceListApi.as_view(), name="source-list"),
    path(SOURCE, source_apis.SourceDetailApi.as_view(), name="source-detail"),
    path(f"{SOURCE}sync/", source_apis.SourceSyncApi.as_view(), name="source-sync"),
    path(f"{SOURCE}runs/", source_apis.SourceRunListApi.as_view(), name="source-runs"),
    path(RESOURCE, apis.ResourceDetailApi.as_view(), name="resource-detail"),
    path(f"{RESOURCE}reingest/", apis.ResourceReingestApi.as_view(), name="resource-reingest"),
]
