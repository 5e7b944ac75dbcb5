"""Web sources of a workspace and their runs (admin keys only: 403 for
``chat`` keys, 401 for end-user tokens; a foreign workspace or source is a
404). docs/ingestion.md, "Web sources"."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from daneshyar.api import PageParamsSerializer, StringField, ok, paginate
from daneshyar.schema import envelope, list_envelope
from resources.external import MAX_EXTERNAL_ID_CHARS
from resources.models import Source, SourceKind, SourceRun, SourceRunStatus
from resources.sources import services
from workspaces.access import WorkspaceApi

TAGS = ["Sources"]
MAX_SCHEDULE_SECONDS = 90 * 24 * 3600


class SourceRunSerializer(serializers.ModelSerializer[SourceRun]):
    status = serializers.ChoiceField(choices=SourceRunStatus.choices)

    class Meta:
        model = SourceRun
        fields = [
            "id",
            "status",
            "new",
            "changed",
            "unchanged",
            "deleted",
            "failed",
            "skipped",
            "error",
            "started_at",
            "finished_at",
            "heartbeat_at",
        ]
        ref_name = "SourceRun"


class SourceSerializer(serializers.ModelSerializer[Source]):
    kind = serializers.ChoiceField(choices=SourceKind.choices)
    urls = serializers.ListField(child=serializers.CharField())
    last_run = serializers.SerializerMethodField()

    class Meta:
        model = Source
        fields = [
            "id",
            "kind",
            "urls",
            "schedule_seconds",
            "max_pages",
            "max_page_bytes",
            "same_host",
            "max_delete_percent",
            "created_at",
            "updated_at",
            "last_run_at",
            "last_run",
        ]
        ref_name = "Source"

    @extend_schema_field(SourceRunSerializer(allow_null=True))
    def get_last_run(self, obj: Source) -> Any:
        run = obj.runs.first()
        return None if run is None else SourceRunSerializer(run).data


KIND_HELP = "`page`: one URL; `pages`: a list; `sitemap`: a sitemap's URL (an index is followed)."
URLS_HELP = (
    "http or https; a host resolving to a loopback, private, link-local or reserved address is "
    "refused unless the deployment allows them (OUTBOUND_ALLOW_PRIVATE)."
)


class SourceInputSerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=SourceKind.choices, help_text=KIND_HELP)
    urls = serializers.ListField(
        child=StringField(max_length=MAX_EXTERNAL_ID_CHARS), max_length=services.MAX_URLS, help_text=URLS_HELP
    )
    schedule_seconds = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=300,
        max_value=MAX_SCHEDULE_SECONDS,
        help_text="Seconds between syncs (at least 300); null (default): only on `POST …/sync/`.",
    )
    max_pages = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=settings.SOURCES_MAX_PAGES,
        help_text="Pages one sync fetches at most (default 1,000; at most SOURCES_MAX_PAGES); the rest of a "
        "sitemap is `skipped`.",
    )
    max_page_bytes = serializers.IntegerField(
        required=False, min_value=1, max_value=settings.MAX_UPLOAD_BYTES
    )
    same_host = serializers.BooleanField(
        required=False, help_text="Default true: pages on other hosts than the URLs' are skipped."
    )
    max_delete_percent = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=100,
        help_text="The guard (default 50): a sync that would delete more than this share of the "
        "source's documents fails and deletes nothing.",
    )

    class Meta:
        ref_name = "SourceInput"


class SourceUpdateSerializer(SourceInputSerializer):
    kind = serializers.ChoiceField(choices=SourceKind.choices, required=False, help_text=KIND_HELP)
    urls = serializers.ListField(
        child=StringField(max_length=MAX_EXTERNAL_ID_CHARS),
        required=False,
        max_length=services.MAX_URLS,
        help_text=URLS_HELP,
    )

    class Meta:
        ref_name = "SourceUpdateInput"


class SourceListApi(WorkspaceApi):
    admin_methods = frozenset({"GET", "POST"})

    @extend_schema(
        operation_id="sources_list",
        summary="List web sources",
        description="The workspace's web sources, oldest first, each with its last run (admin keys).",
        tags=TAGS,
        parameters=[PageParamsSerializer],
        responses=list_envelope("SourceList", SourceSerializer),
    )
    def get(self, request: Request, workspace_id: Any) -> Response:
        return paginate(
            request,
            services.source_list(workspace=self.workspace),
            ordering=("created_at", "id"),
            serialize=lambda rows: SourceSerializer(rows, many=True).data,
        )

    @extend_schema(
        operation_id="sources_create",
        summary="Create a web source",
        description="A page, a list of pages or a sitemap kept in sync with the workspace: each page "
        "becomes a document whose `external_id` is its URL. Nothing is fetched until the first run "
        "(`POST …/sources/{id}/sync/`, or the schedule). 201 (admin keys).",
        tags=TAGS,
        request=SourceInputSerializer,
        responses={201: envelope("SourceCreated", SourceSerializer)},
    )
    def post(self, request: Request, workspace_id: Any) -> Response:
        serializer = SourceInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        fields = services.SourceFields(**serializer.validated_data)
        source = services.source_create(workspace=self.workspace, fields=fields)
        return ok(SourceSerializer(source).data, status=201)


class SourceDetailApi(WorkspaceApi):
    admin_methods = frozenset({"GET", "PATCH", "DELETE"})

    @extend_schema(
        operation_id="sources_get",
        summary="Get a web source",
        description="One source and its last run (admin keys).",
        tags=TAGS,
        responses=envelope("SourceDetail", SourceSerializer),
    )
    def get(self, request: Request, workspace_id: Any, source_id: Any) -> Response:
        return ok(SourceSerializer(services.source_get(workspace=self.workspace, source_id=source_id)).data)

    @extend_schema(
        operation_id="sources_update",
        summary="Update a web source",
        description="Change its URLs, schedule or limits; fields not sent keep their values. A page "
        "no longer listed is deleted by the next run, within the guard (admin keys).",
        tags=TAGS,
        request=SourceUpdateSerializer,
        responses=envelope("SourceUpdated", SourceSerializer),
    )
    def patch(self, request: Request, workspace_id: Any, source_id: Any) -> Response:
        source = services.source_get(workspace=self.workspace, source_id=source_id)
        serializer = SourceUpdateSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        source = services.source_update(source=source, changes=dict(serializer.validated_data))
        return ok(SourceSerializer(source).data)

    @extend_schema(
        operation_id="sources_delete",
        summary="Delete a web source",
        description="The source and its runs. Its documents stay in the workspace; delete them as "
        "any other (admin keys). 204.",
        tags=TAGS,
        responses={204: None},
    )
    def delete(self, request: Request, workspace_id: Any, source_id: Any) -> Response:
        services.source_delete(source=services.source_get(workspace=self.workspace, source_id=source_id))
        return Response(status=204)


class SourceSyncApi(WorkspaceApi):
    admin_methods = frozenset({"POST"})

    @extend_schema(
        operation_id="sources_sync",
        summary="Sync a web source now",
        description="Start a run: 202 with the run, `running`; follow it on `GET …/runs/`. 409 "
        "`sync_running` while a run of the source is running (admin keys).",
        tags=TAGS,
        request=None,
        responses={202: envelope("SourceSyncStarted", SourceRunSerializer)},
    )
    def post(self, request: Request, workspace_id: Any, source_id: Any) -> Response:
        source = services.source_get(workspace=self.workspace, source_id=source_id)
        return ok(SourceRunSerializer(services.source_sync_start(source=source)).data, status=202)


class SourceRunListApi(WorkspaceApi):
    admin_methods = frozenset({"GET"})

    @extend_schema(
        operation_id="sources_runs",
        summary="List a web source's runs",
        description="Its runs, newest first, with their counts: `new`, `changed` (re-ingested in "
        "place), `unchanged` (a 304 or the same bytes: nothing embedded), `deleted`, `failed`, "
        "`skipped` (robots.txt, limits, another host, or held back by the guard) (admin keys).",
        tags=TAGS,
        parameters=[PageParamsSerializer],
        responses=list_envelope("SourceRunList", SourceRunSerializer),
    )
    def get(self, request: Request, workspace_id: Any, source_id: Any) -> Response:
        source = services.source_get(workspace=self.workspace, source_id=source_id)
        return paginate(
            request,
            services.source_runs(source=source),
            ordering=("-started_at", "-id"),
            serialize=lambda rows: SourceRunSerializer(rows, many=True).data,
        )
