"""Resource endpoints (spec "Resources"). One view per path; views parse
input, call one service or selector, and shape the output.

Scopes: uploads, deletes and reingests need an ``admin`` key (403 for
``chat`` keys); reading resources is open to both. The workspace is resolved
first (``WorkspaceApi``), so a foreign or disallowed workspace is a 404 for
every key, whatever its scope. The passages of a resource are retrieval's:
``retrieval/apis.py`` serves them.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from daneshyar.api import PageParamsSerializer, ok, paginate, query_data
from daneshyar.exceptions import PayloadTooLarge
from daneshyar.schema import envelope, list_envelope
from resources import selectors, services
from resources.models import Resource, ResourceStatus
from workspaces.access import WorkspaceApi
from workspaces.idempotency import idempotent

_ERROR_SCHEMA = inline_serializer(
    "ResourceError", {"code": serializers.CharField(), "message": serializers.CharField()}, allow_null=True
)


class ResourceOutputSerializer(serializers.ModelSerializer[Resource]):
    error = serializers.SerializerMethodField()

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
    upload_methods = frozenset({"POST"})

    class UploadInputSerializer(serializers.Serializer[Any]):
        file = serializers.FileField(allow_empty_file=True)
        title = serializers.CharField(required=False, allow_blank=True, max_length=500)

        class Meta:
            ref_name = "ResourceUploadInput"

    class TextInputSerializer(serializers.Serializer[Any]):
        title = serializers.CharField(required=False, allow_blank=True, max_length=500)
        text = serializers.CharField(trim_whitespace=False)

        class Meta:
            ref_name = "ResourceTextInput"

    class FilterSerializer(serializers.Serializer[Any]):
        status = serializers.ChoiceField(choices=ResourceStatus.choices, required=False)

    @extend_schema(
        operation_id="resources_list",
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
        description="Upload a document (multipart `file`, optional `title`) or send text as JSON. "
        "202 with the new resource in status `pending`; 200 with the existing resource when the "
        "same bytes were already uploaded to this workspace.",
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
            )
        else:
            text = self.TextInputSerializer(data=request.data)
            text.is_valid(raise_exception=True)
            outcome = services.resource_create_from_text(
                workspace=workspace,
                text=text.validated_data["text"],
                title=text.validated_data.get("title", ""),
            )
        return ok(ResourceOutputSerializer(outcome.resource).data, status=202 if outcome.created else 200)


class ResourceDetailApi(WorkspaceApi):
    admin_methods = frozenset({"DELETE"})

    @extend_schema(
        operation_id="resources_get", responses=envelope("ResourceDetail", ResourceOutputSerializer)
    )
    def get(self, request: Request, workspace_id: Any, resource_id: Any) -> Response:
        resource = selectors.resource_get(workspace=self.workspace, resource_id=resource_id)
        return ok(ResourceOutputSerializer(resource).data)

    @extend_schema(operation_id="resources_delete", responses={204: None})
    def delete(self, request: Request, workspace_id: Any, resource_id: Any) -> Response:
        resource = selectors.resource_get(workspace=self.workspace, resource_id=resource_id)
        services.resource_delete(resource=resource)
        return Response(status=204)


class ResourceReingestApi(WorkspaceApi):
    admin_methods = frozenset({"POST"})

    @extend_schema(
        operation_id="resources_reingest",
        request=None,
        description="Queue a fresh ingestion. A ready resource stays ready, with its old passages, "
        "until the new ones replace them in one transaction.",
        responses={202: envelope("ResourceReingest", ResourceOutputSerializer)},
    )
    def post(self, request: Request, workspace_id: Any, resource_id: Any) -> Response:
        resource = selectors.resource_get(workspace=self.workspace, resource_id=resource_id)
        resource = services.resource_reingest(resource=resource)
        return ok(ResourceOutputSerializer(resource).data, status=202)
