"""Retrieval endpoints: search (what chat would retrieve, inspectable by
integrators) and the passages of a resource."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from daneshyar.api import PageParamsSerializer, UUIDField, ok, paginate
from daneshyar.schema import also_answers, list_envelope
from resources.selectors import resource_get
from retrieval.search import search
from retrieval.selectors import passage_list
from retrieval.serializers import FiltersField, GroupsField, access_of, bbox_field
from workspaces.access import WorkspaceApi

MAX_RESOURCE_IDS = 20
MAX_TOP_K = 50


class SearchApi(WorkspaceApi):
    """``POST /api/v1/workspaces/{id}/search/``: chat and admin keys alike."""

    class InputSerializer(serializers.Serializer[Any]):
        query = serializers.CharField()
        resource_ids = serializers.ListField(child=UUIDField(), required=False, max_length=MAX_RESOURCE_IDS)
        top_k = serializers.IntegerField(required=False, min_value=1, max_value=MAX_TOP_K)
        filters = FiltersField()
        groups = GroupsField()

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
        page = serializers.IntegerField(
            allow_null=True,
            help_text="1-based page where the passage starts; null where the format has no pages.",
        )
        bbox = bbox_field()
        language = serializers.CharField(
            help_text="The passage's language, detected at ingestion: en, fa, ar, de, fr, or und "
            'when it could not be told (docs/retrieval.md, "The lexical analysis").'
        )

        class Meta:
            ref_name = "SearchResult"

    @extend_schema(
        operation_id="workspaces_search",
        summary="Search passages",
        description=(
            "The passages closest to `query` among the workspace's ready resources, ranked with the "
            "same retrieval as chat (dense and lexical, fused), optionally widened to named "
            "`resource_ids`: what a chat turn would cite, inspectable. `filters` (metadata) and `groups` "
            "(the end user's) narrow it inside every leg; nothing matching: an empty list."
        ),
        tags=["Search"],
        request=InputSerializer,
        responses=list_envelope("SearchResults", OutputSerializer),
    )
    @also_answers(503)  # embedding_unavailable: the embedding server (EMBEDDING_BACKEND=remote) is down
    def post(self, request: Request, workspace_id: str) -> Response:
        # The workspace is resolved first: a foreign one is 404 whatever the body says.
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        access = access_of(data)
        data.pop("filters", None)
        data.pop("groups", None)
        results = search(workspace=self.workspace, access=access, **data)
        return ok({"items": self.OutputSerializer(results, many=True).data, "next_cursor": None})


class PassageOutputSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    resource_id = serializers.UUIDField()
    ordinal = serializers.IntegerField()
    text = serializers.CharField()
    char_start = serializers.IntegerField(help_text="Offset of the passage in the document's extracted text.")
    char_end = serializers.IntegerField()
    page = serializers.IntegerField(
        allow_null=True,
        help_text="1-based page where the passage starts (PDF, image); null where the format has none.",
    )
    bbox = bbox_field()
    token_count = serializers.IntegerField()
    embedding_model = serializers.CharField()

    class Meta:
        ref_name = "Passage"


class PassageListApi(WorkspaceApi):
    # GET …/resources/{resource_id}/passages/: the chunks, in order.

    @extend_schema(
        operation_id="resources_passages",
        summary="List a resource's passages",
        description="The chunks of a document, in order: what retrieval searches and what chat cites.",
        tags=["Resources"],
        parameters=[PageParamsSerializer],
        responses=list_envelope("PassageList", PassageOutputSerializer),
    )
    def get(self, request: Request, workspace_id: Any, resource_id: Any) -> Response:
        resource = resource_get(workspace=self.workspace, resource_id=resource_id)
        return paginate(
            request,
            passage_list(resource=resource),
            ordering=("ordinal",),
            serialize=lambda rows: PassageOutputSerializer(rows, many=True).data,
        )
