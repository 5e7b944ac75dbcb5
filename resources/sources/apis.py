"""Web sources of a workspace and their runs (admin keys only: 403 for
``chat`` keys, 401 for end-user tokens; a foreign workspace or source is a
404). docs/ingestion.md, "Web sources"."""

from __future__ import annotations

from typing import Any, ClassVar

from django.conf import settings
from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from daneshyar.api import StringField
from daneshyar.views import ActionMixin, DetailMixin, ListCreateMixin, ListMixin, Operation, SerializerClass
from resources.external import MAX_EXTERNAL_ID_CHARS
from resources.models import Source, SourceKind, SourceRun, SourceRunStatus
from resources.sources import services
from workspaces.access import WorkspaceGenericApi

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


class SourceApi(WorkspaceGenericApi):
    tags = TAGS
    row_serializer: ClassVar[SerializerClass] = SourceSerializer
    schema_name = "Source"

    def row(self, **path: Any) -> Source:
        return services.source_get(workspace=self.workspace, source_id=path["source_id"])


class SourceListApi(ListCreateMixin, SourceApi):
    admin_methods = frozenset({"GET", "POST"})
    ordering = ("created_at", "id")
    create_serializer = SourceInputSerializer
    list_operation = Operation(
        "sources_list",
        "List web sources",
        "The workspace's web sources, oldest first, each with its last run (admin keys).",
    )
    create_operation = Operation(
        "sources_create",
        "Create a web source",
        "A page, a list of pages or a sitemap kept in sync with the workspace: each page "
        "becomes a document whose `external_id` is its URL. Nothing is fetched until the first run "
        "(`POST …/sources/{id}/sync/`, or the schedule). 201 (admin keys).",
    )

    def rows(self, owner: Any) -> QuerySet[Source]:
        return services.source_list(workspace=owner)

    def create(self, owner: Any, data: Any) -> Source:
        return services.source_create(workspace=owner, fields=services.SourceFields(**data))


class SourceDetailApi(DetailMixin, SourceApi):
    admin_methods = frozenset({"GET", "PATCH", "DELETE"})
    update_serializer = SourceUpdateSerializer
    retrieve_operation = Operation(
        "sources_get", "Get a web source", "One source and its last run (admin keys)."
    )
    update_operation = Operation(
        "sources_update",
        "Update a web source",
        "Change its URLs, schedule or limits; fields not sent keep their values. A page "
        "no longer listed is deleted by the next run, within the guard (admin keys).",
    )
    destroy_operation = Operation(
        "sources_delete",
        "Delete a web source",
        "The source and its runs. Its documents stay in the workspace; delete them as "
        "any other (admin keys). 204.",
    )

    def update(self, row: Source, data: Any) -> Source:
        return services.source_update(source=row, changes=dict(data))

    def destroy(self, row: Source) -> None:
        services.source_delete(source=row)


class SourceSyncApi(ActionMixin, SourceApi):
    admin_methods = frozenset({"POST"})
    action_serializer = SourceRunSerializer
    action_schema_name = "SourceSyncStarted"
    action_operation = Operation(
        "sources_sync",
        "Sync a web source now",
        "Start a run: 202 with the run, `running`; follow it on `GET …/runs/`. 409 "
        "`sync_running` while a run of the source is running (admin keys).",
    )

    def act(self, row: Source, **path: Any) -> SourceRun:
        return services.source_sync_start(source=row)


class SourceRunListApi(ListMixin, SourceApi):
    admin_methods = frozenset({"GET"})
    row_serializer = SourceRunSerializer
    schema_name = "SourceRun"
    ordering = ("-started_at", "-id")
    list_operation = Operation(
        "sources_runs",
        "List a web source's runs",
        "Its runs, newest first, with their counts: `new`, `changed` (re-ingested in "
        "place), `unchanged` (a 304 or the same bytes: nothing embedded), `deleted`, `failed`, "
        "`skipped` (robots.txt, limits, another host, or held back by the guard) (admin keys).",
    )

    def owner(self, **path: Any) -> Source:
        return self.row(**path)

    def rows(self, owner: Source) -> QuerySet[SourceRun]:
        return services.source_runs(source=owner)
