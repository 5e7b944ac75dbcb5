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
from drf_spectacular.types import OpenApiTypes
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
from resources import bulk, selectors, services
from resources.attributes import AccessField, AccessFormField, MetadataField, MetadataFormField
from resources.models import Resource, ResourceStatus
from workspaces.access import WorkspaceApi
from workspaces.idempotency import idempotent
from workspaces.ratelimit import rate_limit_upload

_ERROR_SCHEMA = inline_serializer(
    "ResourceError", {"code": serializers.CharField(), "message": serializers.CharField()}, allow_null=True
)


class ResourceOutputSerializer(serializers.ModelSerializer[Resource]):
    error = serializers.SerializerMethodField()
    metadata = MetadataField(read_only=True)
    access = AccessField(read_only=True)

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
            "created_at",
            "updated_at",
        ]
        ref_name = "Resource"

    @extend_schema_field(_ERROR_SCHEMA)
    def get_error(self, obj: Resource) -> dict[str, str] | None:
        if obj.status != ResourceStatus.FAILED:
            return None
        return {"code": obj.error_code, "message": obj.error_message}


BulkTextSerializerList = bulk.BulkTextSerializer(many=True)


class ResourceListCreateApi(WorkspaceApi):
    admin_methods = frozenset({"POST"})
    parser_classes = [JSONParser, MultiPartParser]
    upload_methods = frozenset({"POST"})

    class UploadInputSerializer(serializers.Serializer[Any]):
        file = serializers.FileField(allow_empty_file=True)
        title = serializers.CharField(required=False, allow_blank=True, max_length=500)
        metadata = MetadataFormField(required=False)
        access = AccessFormField(required=False)

        class Meta:
            ref_name = "ResourceUploadInput"

    class TextInputSerializer(serializers.Serializer[Any]):
        title = serializers.CharField(required=False, allow_blank=True, max_length=500)
        text = serializers.CharField(trim_whitespace=False)
        metadata = MetadataField(required=False)
        access = AccessField(required=False)

        class Meta:
            ref_name = "ResourceTextInput"

    class FilterSerializer(serializers.Serializer[Any]):
        status = serializers.ChoiceField(choices=ResourceStatus.choices, required=False)

    @extend_schema(
        operation_id="resources_list",
        summary="List resources",
        description=(
            "The workspace's documents, newest first, optionally only those in one `status` "
            "(`pending`, `processing`, `ready`, `failed`)."
        ),
        tags=["Resources"],
        parameters=[
            OpenApiParameter("status", enum=ResourceStatus.values, required=False),
            PageParamsSerializer,
        ],
        responses=list_envelope("ResourceList", ResourceOutputSerializer),
    )
    def get(self, request: Request, workspace_id: Any) -> Response:
        filters = self.FilterSerializer(data=query_data(request))
        filters.is_valid(raise_exception=True)
        return paginate(
            request,
            selectors.resource_list(workspace=self.workspace, status=filters.validated_data.get("status")),
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
        "or `access` is a 400 naming the key (`metadata.price`); nothing is stored.",
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
                data=file.read(settings.MAX_UPLOAD_BYTES + 1),
                title=upload.validated_data.get("title", ""),
                filename=(file.name or "").rsplit("/", 1)[-1],
                claimed_type=getattr(file, "content_type", "") or "",
                metadata=upload.validated_data.get("metadata"),
                access=upload.validated_data.get("access"),
            )
        else:
            text = self.TextInputSerializer(data=request.data)
            text.is_valid(raise_exception=True)
            outcome = services.resource_create_from_text(
                workspace=workspace,
                text=text.validated_data["text"],
                title=text.validated_data.get("title", ""),
                metadata=text.validated_data.get("metadata"),
                access=text.validated_data.get("access"),
            )
        return ok(ResourceOutputSerializer(outcome.resource).data, status=202 if outcome.created else 200)


class ResourceDetailApi(WorkspaceApi):
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

    @extend_schema(
        operation_id="resources_get",
        summary="Get a resource",
        description=(
            "One document: its status (`pending` → `processing` → `ready` or `failed`, with `error` "
            "saying why), size, hash and passage count. Poll it after an upload until it is `ready`."
        ),
        tags=["Resources"],
        responses=envelope("ResourceDetail", ResourceOutputSerializer),
    )
    def get(self, request: Request, workspace_id: Any, resource_id: Any) -> Response:
        resource = selectors.resource_get(workspace=self.workspace, resource_id=resource_id)
        return ok(ResourceOutputSerializer(resource).data)

    @extend_schema(
        operation_id="resources_update",
        summary="Change a resource's metadata or access",
        description=(
            "Replace `metadata` and/or `access` (admin keys); a field not sent keeps its value, a field "
            "sent replaces the whole object (`{}` clears the metadata; `null` metadata is a 400; `null` "
            "access opens the document to every end user). The passages stay as they are: nothing is "
            "embedded again, and searches see the new values at once. An unknown field, or a value of "
            "the wrong shape, is a 400 naming it (`metadata.price`); nothing changes."
        ),
        tags=["Resources"],
        request=UpdateInputSerializer,
        responses=envelope("ResourceUpdated", ResourceOutputSerializer),
        examples=[
            OpenApiExample(
                "Metadata and access",
                value={"metadata": {"customer": "4821", "year": 2024}, "access": {"groups": ["staff"]}},
                request_only=True,
            )
        ],
    )
    def patch(self, request: Request, workspace_id: Any, resource_id: Any) -> Response:
        resource = selectors.resource_get(workspace=self.workspace, resource_id=resource_id)
        body = self.UpdateInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        resource = services.resource_update(resource=resource, **body.validated_data)
        return ok(ResourceOutputSerializer(resource).data)

    @extend_schema(
        operation_id="resources_delete",
        summary="Delete a resource",
        description="Delete the document and its passages (admin keys); they leave retrieval at once. 204.",
        tags=["Resources"],
        responses={204: None},
    )
    def delete(self, request: Request, workspace_id: Any, resource_id: Any) -> Response:
        resource = selectors.resource_get(workspace=self.workspace, resource_id=resource_id)
        services.resource_delete(resource=resource)
        return Response(status=204)


class ResourceReingestApi(WorkspaceApi):
    admin_methods = frozenset({"POST"})

    @extend_schema(
        operation_id="resources_reingest",
        summary="Re-ingest a resource",
        tags=["Resources"],
        request=None,
        description="Queue a fresh ingestion. A ready resource stays ready, with its old passages, "
        "until the new ones replace them in one transaction.",
        responses={202: envelope("ResourceReingest", ResourceOutputSerializer)},
    )
    def post(self, request: Request, workspace_id: Any, resource_id: Any) -> Response:
        resource = selectors.resource_get(workspace=self.workspace, resource_id=resource_id)
        resource = services.resource_reingest(resource=resource)
        return ok(ResourceOutputSerializer(resource).data, status=202)


class ResourceBatchItemOutputSerializer(serializers.Serializer[Any]):
    index = serializers.IntegerField(help_text="Position of the document in the request.")
    name = serializers.CharField(allow_null=True, help_text="Path inside the zip; null for text items.")
    outcome = serializers.ChoiceField(choices=["created", "existing", "rejected"])
    resource = ResourceOutputSerializer(allow_null=True)
    error = inline_serializer(
        "ResourceBatchItemError",
        {
            "code": serializers.CharField(),
            "message": serializers.CharField(),
            "fields": serializers.DictField(
                child=serializers.ListField(child=serializers.CharField()), required=False
            ),
        },
        allow_null=True,
    )

    class Meta:
        ref_name = "ResourceBatchItem"


class ResourceBatchApi(WorkspaceApi):
    admin_methods = frozenset({"POST"})
    # The upload limit counts documents: one at the door (an exhausted
    # bucket refuses the body unread), the others once the body is read.
    upload_methods = frozenset({"POST"})
    parser_classes = [
        bulk.BulkJsonParser,
        bulk.NdjsonParser,
        bulk.JsonLinesParser,
        bulk.ZipParser,
        bulk.LegacyZipParser,
        MultiPartParser,
    ]

    class ZipUploadSerializer(serializers.Serializer[Any]):
        file = serializers.FileField(help_text="A zip archive of documents.")

        class Meta:
            ref_name = "ResourceBatchZipUpload"

    class OutputSerializer(serializers.Serializer[Any]):
        created = serializers.IntegerField()
        existing = serializers.IntegerField()
        rejected = serializers.IntegerField()
        documents = ResourceBatchItemOutputSerializer(many=True)

        class Meta:
            ref_name = "ResourceBatch"

    @extend_schema(
        operation_id="resources_create_batch",
        summary="Upload many documents",
        tags=["Resources"],
        description=(
            "Upload many small documents in one request: a JSON array or NDJSON "
            "(`application/x-ndjson`) of `{title, text, metadata?, access?}` objects, or a zip archive "
            "of documents (`application/zip` body, or multipart `file`), optionally with a "
            '`manifest.json` at its root: `{"documents": {"<path in the zip>": {"title"?, "metadata"?, '
            '"access"?}}}`. At most BATCH_UPLOAD_MAX_DOCUMENTS documents and BATCH_UPLOAD_MAX_BYTES '
            "bytes per request (413 beyond), each document at most MAX_UPLOAD_BYTES. 202 with one "
            "entry per document, in order: `created` (a new resource, `pending`), `existing` (the "
            "same bytes are already in the workspace, or earlier in this request: that resource, "
            "with its stored title, metadata and access) or `rejected` (a type that is not accepted, "
            "or over MAX_UPLOAD_BYTES: `error` says which; nothing stored for it). A body that "
            "cannot be read, a document without `text` or with `metadata`/`access` of the wrong "
            "shape, or a malformed manifest, is one 4xx (400 names each problem in `fields`, e.g. "
            '`[2].text`, `[3].metadata.price`, `manifest.documents["a.md"].access`) and stores '
            "nothing."
        ),
        request={
            "application/json": BulkTextSerializerList,
            "application/x-ndjson": OpenApiTypes.STR,
            "application/zip": OpenApiTypes.BINARY,
            "multipart/form-data": ZipUploadSerializer,
        },
        responses={202: envelope("ResourceBatchCreated", OutputSerializer())},
        examples=[
            OpenApiExample(
                "One text",
                value={"title": "Claims", "text": "How to file a claim…"},
                request_only=True,
                media_type="application/json",
            )
        ],
    )
    @idempotent
    def post(self, request: Request, workspace_id: Any) -> Response:
        items = bulk.bulk_items(request.data, declared=self.workspace.metadata_keys)
        rate_limit_upload(
            request, principal=self.principal, workspace=self.workspace, documents=len(items), counted=1
        )
        documents = [item.document for item in items if item.document is not None]
        outcomes = iter(services.resources_create_many(workspace=self.workspace, documents=documents))
        rows: list[dict[str, Any]] = []
        counts = {"created": 0, "existing": 0, "rejected": 0}
        for index, item in enumerate(items):
            if item.document is not None:
                outcome = next(outcomes)
                state, resource, error = outcome.outcome, outcome.resource, outcome.error
            else:
                state, resource, error = "rejected", None, item.error
            counts[state] += 1
            rows.append(
                {
                    "index": index,
                    "name": item.name,
                    "outcome": state,
                    "resource": ResourceOutputSerializer(resource).data if resource is not None else None,
                    "error": _error_body(error),
                }
            )
        return ok({**counts, "documents": rows}, status=202)


def _error_body(error: Any) -> dict[str, Any] | None:
    if error is None:
        return None
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.fields:
        body["fields"] = error.fields
    return body
