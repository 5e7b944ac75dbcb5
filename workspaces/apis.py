from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from daneshyar.api import ok, paginate
from daneshyar.exceptions import Forbidden
from daneshyar.schema import envelope, list_envelope
from workspaces import selectors, services
from workspaces.models import ApiKey, Workspace
from workspaces.permissions import HasApiKey, IsAdminKey


class WorkspaceOutputSerializer(serializers.ModelSerializer[Workspace]):
    class Meta:
        model = Workspace
        fields = [
            "id",
            "name",
            "system_prompt",
            "history_turns",
            "top_k",
            "widened_top_k",
            "per_resource_k",
            "retention_days",
            "created_at",
            "updated_at",
        ]
        ref_name = "Workspace"


class WorkspaceSettingsMixin(serializers.Serializer[Any]):
    system_prompt = serializers.CharField(required=False, allow_blank=True, max_length=20_000)
    history_turns = serializers.IntegerField(required=False, min_value=0, max_value=100)
    top_k = serializers.IntegerField(required=False, min_value=1, max_value=50)
    widened_top_k = serializers.IntegerField(required=False, min_value=1, max_value=50)
    per_resource_k = serializers.IntegerField(required=False, min_value=1, max_value=20)
    retention_days = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=36500)


def _key(request: Request) -> ApiKey:
    assert isinstance(request.auth, ApiKey)
    return request.auth


class WorkspaceListCreateApi(APIView):
    permission_classes = [IsAdminKey]

    class InputSerializer(WorkspaceSettingsMixin):
        name = serializers.CharField(max_length=200)

        class Meta:
            ref_name = "WorkspaceCreateInput"

    @extend_schema(
        operation_id="workspaces_list",
        responses=list_envelope("WorkspaceList", WorkspaceOutputSerializer),
    )
    def get(self, request: Request) -> Response:
        return paginate(
            request,
            selectors.workspace_list(api_key=_key(request)),
            ordering=("created_at", "id"),
            serialize=lambda rows: WorkspaceOutputSerializer(rows, many=True).data,
        )

    @extend_schema(
        operation_id="workspaces_create",
        request=InputSerializer,
        responses={201: envelope("WorkspaceCreated", WorkspaceOutputSerializer)},
    )
    def post(self, request: Request) -> Response:
        api_key = _key(request)
        if api_key.allowed_workspace_ids:
            raise Forbidden("A key limited to some workspaces cannot create workspaces.")
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        workspace = services.workspace_create(organization=api_key.organization, **serializer.validated_data)
        return ok(WorkspaceOutputSerializer(workspace).data, status=201)


class WorkspaceDetailApi(APIView):
    permission_classes = [IsAdminKey]

    class InputSerializer(WorkspaceSettingsMixin):
        name = serializers.CharField(max_length=200, required=False)

        class Meta:
            ref_name = "WorkspaceUpdateInput"

    @extend_schema(
        operation_id="workspaces_get", responses=envelope("WorkspaceDetail", WorkspaceOutputSerializer)
    )
    def get(self, request: Request, workspace_id: str) -> Response:
        workspace = selectors.workspace_get(api_key=_key(request), workspace_id=workspace_id)
        return ok(WorkspaceOutputSerializer(workspace).data)

    @extend_schema(
        operation_id="workspaces_update",
        request=InputSerializer,
        responses=envelope("WorkspaceUpdated", WorkspaceOutputSerializer),
    )
    def patch(self, request: Request, workspace_id: str) -> Response:
        workspace = selectors.workspace_get(api_key=_key(request), workspace_id=workspace_id)
        serializer = self.InputSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        workspace = services.workspace_update(workspace=workspace, **serializer.validated_data)
        return ok(WorkspaceOutputSerializer(workspace).data)

    @extend_schema(operation_id="workspaces_delete", responses={204: None})
    def delete(self, request: Request, workspace_id: str) -> Response:
        workspace = selectors.workspace_get(api_key=_key(request), workspace_id=workspace_id)
        services.workspace_delete(workspace=workspace)
        return Response(status=204)


class ModelListApi(APIView):
    permission_classes = [HasApiKey]

    @extend_schema(
        operation_id="models_list",
        responses=envelope(
            "ModelList",
            inline_serializer(
                "ModelItems",
                {
                    "items": inline_serializer(
                        "Model",
                        {
                            "id": serializers.CharField(),
                            "backend": serializers.CharField(),
                            "default": serializers.BooleanField(),
                        },
                        many=True,
                    ),
                    "next_cursor": serializers.CharField(allow_null=True),
                },
            ),
        ),
    )
    def get(self, request: Request) -> Response:
        items = [dict(model) for model in settings.GENERATION_MODELS]
        return ok({"items": items, "next_cursor": None})
