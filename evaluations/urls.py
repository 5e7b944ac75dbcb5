"""Routes of the evaluation wing, relative to /api/v1/."""

from __future__ import annotations

from django.urls import URLPattern, path

from daneshyar.api import WORKSPACE_ROUTE
from evaluations import apis, run_apis

SET = f"{WORKSPACE_ROUTE}test-sets/<uuid:test_set_id>/"
RUN = f"{WORKSPACE_ROUTE}evaluations/<uuid:run_id>/"

urlpatterns: list[URLPattern] = [
    path(f"{WORKSPACE_ROUTE}test-sets/", apis.TestSetListApi.as_view(), name="test-set-list"),
    path(SET, apis.TestSetDetailApi.as_view(), name="test-set-detail"),
    path(f"{SET}items/", apis.TestItemListApi.as_view(), name="test-item-list"),
    path(f"{SET}items/<uuid:item_id>/", apis.TestItemDetailApi.as_view(), name="test-item-detail"),
    path(f"{SET}import/", apis.TestItemImportApi.as_view(), name="test-item-import"),
    path(f"{SET}export/", apis.TestItemExportApi.as_view(), name="test-item-export"),
    path(f"{WORKSPACE_ROUTE}evaluations/", run_apis.RunListApi.as_view(), name="evaluation-list"),
    path(RUN, run_apis.RunDetailApi.as_view(), name="evaluation-detail"),
    path(f"{RUN}items/", run_apis.RunResultListApi.as_view(), name="evaluation-items"),
    path(f"{RUN}compare/<uuid:other_id>/", run_apis.RunCompareApi.as_view(), name="evaluation-compare"),
]
