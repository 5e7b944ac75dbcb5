"""Search endpoint: what chat would retrieve, inspectable by integrators."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from daneshyar.api import ok
from daneshyar.schema import list_envelope
from retrieval.search import search
from workspaces.models import ApiKey
from workspaces.permissions import HasApiKey
from workspaces.selectors import workspace_get

MAX_RESOURCE_IDS = 20
MAX_TOP_K = 50


class SearchApi(APIView):
    """``POST /api/v1/workspaces/{id}/search/``: chat and admin keys alike."""

    permission_classes = [HasApiKey]

    class InputSerializer(serializers.Serializer[Any]):
        query = serializers.CharField()
        resource_ids = serializers.ListField(
            child=serializers.UUIDField(), required=False, max_length=MAX_RESOURCE_IDS
        )
        top_k = serializers.IntegerField(required=False, min_value=1, max_value=MAX_TOP_K)

        class Meta:
            ref_name = "SearchInput"

        def validate_query(self, value: str) -> str:
            # Read at request time so that the limit follows MAX_QUERY_CHARS.
            if len(value) > settings.MAX_QUERY_CHARS:
                raise serializers.ValidationError(
                    f"Ensure this field has no more than {settings.MAX_QUERY_CHARS} characters."
                )
            return value

    class OutputSerializer(serializers.Serializer[Any]):
        passage_id = serializers.UUIDField()
        resource_id = serializers.UUIDField()
        resource_title = serializers.CharField()
        text = serializers.CharField()
        score = serializers.FloatField(help_text="Higher is better; see docs/retrieval.md for its range.")
        rank = serializers.IntegerField(help_text="1 for the best passage.")

        class Meta:
            ref_name = "SearchResult"

    @extend_schema(
        operation_id="workspaces_search",
        request=InputSerializer,
        responses=list_envelope("SearchResults", OutputSerializer),
    )
    def post(self, request: Request, workspace_id: str) -> Response:
        assert isinstance(request.auth, ApiKey)
        # The workspace first: a foreign one is 404 whatever the body says.
        workspace = workspace_get(api_key=request.auth, workspace_id=workspace_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        results = search(workspace=workspace, **serializer.validated_data)
        return ok({"items": self.OutputSerializer(results, many=True).data, "next_cursor": None})
