"""Resource endpoints (spec "Resources"). One view per path; views parse
input, call one service or selector, and shape the output.

Scopes: uploads, changes (``PATCH``), deletes and reingests need an
``admin`` key (403 for ``chat`` keys; end-user tokens are not accepted on
these routes at all: 401); reading resources is open to both. The workspace is resolved
first (``WorkspaceApi``), so a foreign or disallowed workspace is a 404 for
every key, whatever its scope. The passages of a resource are retrieval's:
``retrieval/apis.py`` serves them.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from daneshyar.api import PageParamsSerializer, ok, paginate, query_data
from daneshyar.exceptions import PayloadTooLarge
from daneshyar.parsers import JSONParser
from daneshyar.schema import envelope, list_envelope
from daneshyar.views import ActionMixin, DetailMixin, Operation
from resources import selectors, services
from resources.attribute_fields import AccessField, AccessFormField, MetadataField, MetadataFormField
from resources.bulk import TextDocumentSerializer
from resources.external import UNCHANGED, ExternalIdField, external_from
from resources.models import Resource, ResourceStatus
from workspaces.access import WorkspaceApi, WorkspaceGenericApi
from workspaces.idempotency import idempotent

_ERROR_SCHEMA = inline_serializer(
    "ResourceError", {"code": serializers.CharField(), "message": serializers.CharField()}, allow_null=True
)


class ResourceOutputSerializer(serializers.ModelSerializer[Resource]):
    error = serializers.SerializerMethodField()
    metadata = MetadataField(read_only=True)
    access = AccessField(read_only=True)
    version = serializers.CharField(source="external_version", read_only=True)

    class Meta:
        model = Resource
        fields = [
            "id",
            "title",
            "filename",
            "content_type",
            "size_bytes",
            "sha256",
            "status",
            "error",
            "passage_count",
            "metadata",
            "access",
            "external_id",
            "version",
            "created_at",
            "updated_at",
        ]
        ref_name = "Resource"

    @extend_schema_field(_ERROR_SCHEMA)
    def get_error(self, obj: Resource) -> dict[str, str] | None:
        if obj.status != ResourceStatus.FAILED:
            return None
        return {"code": obj.error_code, "message": obj.error_message}


class ResourceListCreateApi(WorkspaceApi):
    admin_methods = frozenset({"POST"})
    parser_classes = [JSONParser, MultiPartParser]
    upload_methods = frozenset({"POST"})

    class UploadInputSerializer(serializers.Serializer[Any]):
        file = serializers.FileField(allow_empty_file=True)
        title = serializers.CharField(required=False, allow_blank=True, max_length=500)
        metadata = MetadataFormField(required=False)
        access = AccessFormField(required=False)
        external_id = ExternalIdField(required=False)
        version = ExternalIdField(required=False)

        class Meta:
            ref_name = "ResourceUploadInput"

    class TextInputSerializer(TextDocumentSerializer):
        class Meta:
            ref_name = "ResourceTextInput"

    class FilterSerializer(serializers.Serializer[Any]):
        status = serializers.ChoiceField(choices=ResourceStatus.choices, required=False)
        external_id = ExternalIdField(required=False)

    @extend_schema(
        operation_id="resources_list",
        summary="List resources",
        description=(
            "The workspace's documents, newest first, optionally only those in one `status` "
            "(`pending`, `processing`, `ready`, `failed`), or only the one with an `external_id`."
        ),
        tags=["Resources"],
        parameters=[
            OpenApiParameter("status", enum=ResourceStatus.values, required=False),
            OpenApiParameter(
                "external_id", str, required=False, description="Only the document with this id."
            ),
            PageParamsSerializer,
        ],
        responses=list_envelope("ResourceList", ResourceOutputSerializer),
    )
    def get(self, request: Request, workspace_id: Any) -> Response:
        filters = self.FilterSerializer(data=query_data(request))
        filters.is_valid(raise_exception=True)
        return paginate(
            request,
            selectors.resource_list(workspace=self.workspace, **filters.validated_data),
            ordering=("-created_at", "-id"),
            serialize=lambda rows: ResourceOutputSerializer(rows, many=True).data,
        )

    @extend_schema(
        operation_id="resources_create",
        summary="Upload a document",
        tags=["Resources"],
        description="Upload a document (multipart `file`, optional `title`, and optional `metadata` "
        "and `access` as JSON strings) or send text as JSON (`text`, optional `title`, `metadata`, "
        "`access`). 202 with the new resource in status `pending`; 200 with the existing resource, "
        "unchanged, when the same bytes were already uploaded to this workspace (the `title`, "
        "`metadata` and `access` sent are not applied to it: PATCH changes them). Malformed `metadata` "
        "or `access` is a 400 naming the key (`metadata.price`); nothing is stored. With an `external_id` "
        "(the document's id in the integrator's source, ≤ 255 characters; optional `version`) that the "
        "workspace holds: 200 with that resource, its content replaced in place (same id; re-ingested, "
        "its old passages answering until the new ones are ready) and the `title`, `metadata`, `access` "
        "and `version` sent applied (those not sent keep their values); the same bytes again embed "
        "nothing. New bytes that another document of the workspace holds: 409 `duplicate_content`.",
        request={
            "multipart/form-data": UploadInputSerializer,
            "application/json": TextInputSerializer,
        },
        responses={
            202: envelope("ResourceCreated", ResourceOutputSerializer),
            200: envelope("ResourceExisting", ResourceOutputSerializer),
        },
    )
    @idempotent
    def post(self, request: Request, workspace_id: Any) -> Response:
        workspace = self.workspace
        if (request.content_type or "").startswith("multipart/"):
            upload = self.UploadInputSerializer(data=request.data)
            upload.is_valid(raise_exception=True)
            file = upload.validated_data["file"]
            if file.size is not None and file.size > settings.MAX_UPLOAD_BYTES:
                raise PayloadTooLarge(
                    f"The file is {file.size:,} bytes; the limit is {settings.MAX_UPLOAD_BYTES:,} bytes."
                )
            outcome = services.resource_create(
                workspace=workspace,
                upload=services.Upload(
                    data=file.read(settings.MAX_UPLOAD_BYTES + 1),
                    title=upload.validated_data.get("title", ""),
                    filename=(file.name or "").rsplit("/", 1)[-1],
                    claimed_type=getattr(file, "content_type", "") or "",
                ),
                metadata=upload.validated_data.get("metadata"),
                access=upload.validated_data.get("access", UNCHANGED),
                external=external_from(upload.validated_data),
            )
        else:
            text = self.TextInputSerializer(data=request.data)
            text.is_valid(raise_exception=True)
            outcome = services.resource_create_from_text(
                workspace=workspace,
                text=text.validated_data["text"],
                title=text.validated_data.get("title", ""),
                metadata=text.validated_data.get("metadata"),
                access=text.validated_data.get("access", UNCHANGED),
                external=external_from(text.validated_data),
            )
        return ok(ResourceOutputSerializer(outcome.resource).data, status=202 if outcome.created else 200)


class ResourceApi(WorkspaceGenericApi):
    tags = ["Resources"]
    row_serializer = ResourceOutputSerializer
    schema_name = "Resource"

    def row(self, **path: Any) -> Resource:
        return selectors.resource_get(workspace=self.workspace, resource_id=path["resource_id"])


class ResourceDetailApi(DetailMixin, ResourceApi):
    admin_methods = frozenset({"PATCH", "DELETE"})

    class UpdateInputSerializer(serializers.Serializer[Any]):
        metadata = MetadataField(
            required=False, help_text="Replaces the whole object ({} clears it; null is a 400)."
        )
        access = AccessField(
            required=False, help_text='Replaces the whole object: null (every end user) or {"groups": [...]}.'
        )

        class Meta:
            ref_name = "ResourceUpdateInput"

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            unknown = sorted(set(self.initial_data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
            if not attrs:
                raise serializers.ValidationError("Send metadata, access or both.")
            return attrs

    update_serializer = UpdateInputSerializer
    update_partial = False
    retrieve_operation = Operation(
        "resources_get",
        "Get a resource",
        "One document: its status (`pending` → `processing` → `ready` or `failed`, with `error` "
        "saying why), size, hash and passage count. Poll it after an upload until it is `ready`.",
    )
    update_operation = Operation(
        "resources_update",
        "Change a resource's metadata or access",
        "Replace `metadata` and/or `access` (admin keys); a field not sent keeps its value, a field "
        "sent replaces the whole object (`{}` clears the metadata; `null` metadata is a 400; `null` "
        "access opens the document to every end user). The passages stay as they are: nothing is "
        "embedded again, and searches see the new values at once. An unknown field, or a value of "
        "the wrong shape, is a 400 naming it (`metadata.price`); nothing changes.",
        examples=(
            OpenApiExample(
                "Metadata and access",
                value={"metadata": {"customer": "4821", "year": 2024}, "access": {"groups": ["staff"]}},
                request_only=True,
            ),
        ),
    )
    destroy_operation = Operation(
        "resources_delete",
        "Delete a resource",
        "Delete the document and its passages (admin keys); they leave retrieval at once. 204.",
    )

    def update(self, row: Resource, data: Any) -> Resource:
        return services.resource_update(resource=row, **data)

    def destroy(self, row: Resource) -> None:
        services.resource_delete(resource=row)


class ResourceReingestApi(ActionMixin, ResourceApi):
    admin_methods = frozenset({"POST"})
    action_serializer = ResourceOutputSerializer
    action_schema_name = "ResourceReingest"
    action_operation = Operation(
        "resources_reingest",
        "Re-ingest a resource",
        "Queue a fresh ingestion. A ready resource stays ready, with its old passages, "
        "until the new ones replace them in one transaction.",
    )

    def act(self, row: Resource, **path: Any) -> Resource:
        return services.resource_reingest(resource=row)
