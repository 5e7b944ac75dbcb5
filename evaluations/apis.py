"""Test sets and their items: list, create, read, change, delete, import
(JSONL or CSV) and export (JSONL) (admin keys; docs/evaluation.md)."""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import BaseParser
from rest_framework.request import Request
from rest_framework.response import Response

from daneshyar.api import PageParamsSerializer, StringField, ok, paginate
from daneshyar.exceptions import PayloadTooLarge
from daneshyar.schema import envelope, list_envelope
from evaluations import items, promote
from evaluations.item_lines import MAX_IMPORT_BYTES
from evaluations.models import ExpectedOutcome, TestItem, TestSet
from workspaces.access import WorkspaceApi

TAGS = ["Evaluation"]
NDJSON = "application/x-ndjson"
CSV = "text/csv"


class TestSetSerializer(serializers.ModelSerializer[TestSet]):
    __test__ = False
    item_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = TestSet
        fields = ["id", "name", "item_count", "created_at"]
        ref_name = "TestSet"


class TestSetInputSerializer(serializers.Serializer[Any]):
    __test__ = False
    name = StringField(max_length=200)

    class Meta:
        ref_name = "TestSetInput"


class TestItemSerializer(serializers.ModelSerializer[TestItem]):
    __test__ = False
    question = serializers.CharField(allow_null=True, help_text="Null when the item is a conversation.")
    messages = serializers.JSONField(allow_null=True, help_text="[{role, content}]; null for a question.")
    expected_resource_ids = serializers.ListField(child=serializers.UUIDField())
    expected_outcome = serializers.ChoiceField(choices=ExpectedOutcome.choices)
    source_message_id = serializers.UUIDField(
        allow_null=True,
        read_only=True,
        help_text="The reply the item was built from (deleted with its end user's data); null otherwise.",
    )

    class Meta:
        model = TestItem
        fields = [
            "id",
            "question",
            "messages",
            "expected_resource_ids",
            "expected_answer",
            "expected_outcome",
            "source_message_id",
            "created_at",
        ]
        ref_name = "TestItem"

    def to_representation(self, instance: TestItem) -> Any:
        data = super().to_representation(instance)
        if instance.messages is not None:
            data["question"] = None
        return data


class ImportResultSerializer(serializers.Serializer[Any]):
    imported = serializers.IntegerField(help_text="The items added (every line's).")

    class Meta:
        ref_name = "TestItemImport"


class RawTextParser(BaseParser):
    """The body as bytes, read up to the import limit (JSONL or CSV)."""

    media_type = NDJSON

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        data = stream.read(MAX_IMPORT_BYTES + 1) if stream is not None else b""
        if len(data) > MAX_IMPORT_BYTES:
            raise PayloadTooLarge(f"The request body is over the limit of {MAX_IMPORT_BYTES:,} bytes.")
        return {"body": data}


class JsonLinesParser(RawTextParser):
    media_type = "application/jsonl"


class CsvParser(RawTextParser):
    media_type = CSV


class TestSetListApi(WorkspaceApi):
    admin_methods = frozenset({"GET", "POST"})

    @extend_schema(
        operation_id="test_sets_list",
        summary="List test sets",
        description="The workspace's test sets, oldest first, with their item counts (admin keys).",
        tags=TAGS,
        parameters=[PageParamsSerializer],
        responses=list_envelope("TestSetList", TestSetSerializer),
    )
    def get(self, request: Request, workspace_id: str) -> Response:
        return paginate(
            request,
            items.test_set_list(workspace=self.workspace),
            ordering=("created_at", "id"),
            serialize=lambda rows: TestSetSerializer(rows, many=True).data,
        )

    @extend_schema(
        operation_id="test_sets_create",
        summary="Create a test set",
        description="An empty test set (admin keys); add items one by one or import them.",
        tags=TAGS,
        request=TestSetInputSerializer,
        responses={201: envelope("TestSetCreated", TestSetSerializer)},
    )
    def post(self, request: Request, workspace_id: str) -> Response:
        serializer = TestSetInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        created = items.test_set_create(workspace=self.workspace, name=serializer.validated_data["name"])
        return ok(TestSetSerializer(created).data, status=201)


class TestSetDetailApi(WorkspaceApi):
    admin_methods = frozenset({"GET", "PATCH", "DELETE"})

    @extend_schema(
        operation_id="test_sets_get",
        summary="Get a test set",
        description="Its name and item count (admin keys).",
        tags=TAGS,
        responses=envelope("TestSetDetail", TestSetSerializer),
    )
    def get(self, request: Request, workspace_id: str, test_set_id: str) -> Response:
        return ok(
            TestSetSerializer(items.test_set_get(workspace=self.workspace, test_set_id=test_set_id)).data
        )

    @extend_schema(
        operation_id="test_sets_update",
        summary="Rename a test set",
        description="A new name; the items stay (admin keys).",
        tags=TAGS,
        request=TestSetInputSerializer,
        responses=envelope("TestSetUpdated", TestSetSerializer),
    )
    def patch(self, request: Request, workspace_id: str, test_set_id: str) -> Response:
        test_set = items.test_set_get(workspace=self.workspace, test_set_id=test_set_id)
        serializer = TestSetInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        renamed = items.test_set_rename(test_set=test_set, name=serializer.validated_data["name"])
        return ok(TestSetSerializer(renamed).data)

    @extend_schema(
        operation_id="test_sets_delete",
        summary="Delete a test set",
        description="The test set, its items and its runs (admin keys). 204.",
        tags=TAGS,
        responses={204: None},
    )
    def delete(self, request: Request, workspace_id: str, test_set_id: str) -> Response:
        items.test_set_get(workspace=self.workspace, test_set_id=test_set_id).delete()
        return Response(status=204)


class TestItemListApi(WorkspaceApi):
    admin_methods = frozenset({"GET", "POST"})

    @extend_schema(
        operation_id="test_items_list",
        summary="List a test set's items",
        description="In the set's order (admin keys).",
        tags=TAGS,
        parameters=[PageParamsSerializer],
        responses=list_envelope("TestItemList", TestItemSerializer),
    )
    def get(self, request: Request, workspace_id: str, test_set_id: str) -> Response:
        test_set = items.test_set_get(workspace=self.workspace, test_set_id=test_set_id)
        return paginate(
            request,
            TestItem.objects.filter(test_set=test_set),
            ordering=("position", "id"),
            serialize=lambda rows: TestItemSerializer(rows, many=True).data,
        )

    @extend_schema(
        operation_id="test_items_create",
        summary="Add a test item",
        description="A question (or a conversation as `messages`, or a stored reply's as "
        "`from_message_id`), the documents expected and the outcome expected (admin keys). An expected "
        "document of another workspace is a 400; another workspace's reply, a 404.",
        tags=TAGS,
        request=promote.ItemCreateSerializer,
        responses={201: envelope("TestItemCreated", TestItemSerializer)},
    )
    def post(self, request: Request, workspace_id: str, test_set_id: str) -> Response:
        test_set = items.test_set_get(workspace=self.workspace, test_set_id=test_set_id)
        serializer = promote.ItemCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        created = promote.item_create_any(
            workspace=self.workspace, test_set=test_set, data=serializer.validated_data
        )
        return ok(TestItemSerializer(created).data, status=201)


class TestItemDetailApi(WorkspaceApi):
    admin_methods = frozenset({"PATCH", "DELETE"})

    @extend_schema(
        operation_id="test_items_update",
        summary="Change a test item",
        description="Fields not sent keep their values (admin keys).",
        tags=TAGS,
        request=items.ItemInputSerializer,
        responses=envelope("TestItemUpdated", TestItemSerializer),
    )
    def patch(self, request: Request, workspace_id: str, test_set_id: str, item_id: str) -> Response:
        test_set = items.test_set_get(workspace=self.workspace, test_set_id=test_set_id)
        item = items.item_get(test_set=test_set, item_id=item_id)
        serializer = items.ItemInputSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        return ok(TestItemSerializer(items.item_update(item=item, data=serializer.validated_data)).data)

    @extend_schema(
        operation_id="test_items_delete",
        summary="Delete a test item",
        description="Earlier runs keep their results for it (admin keys). 204.",
        tags=TAGS,
        responses={204: None},
    )
    def delete(self, request: Request, workspace_id: str, test_set_id: str, item_id: str) -> Response:
        test_set = items.test_set_get(workspace=self.workspace, test_set_id=test_set_id)
        items.item_get(test_set=test_set, item_id=item_id).delete()
        return Response(status=204)


class TestItemImportApi(WorkspaceApi):
    admin_methods = frozenset({"POST"})
    parser_classes = [RawTextParser, JsonLinesParser, CsvParser]

    @extend_schema(
        operation_id="test_items_import",
        summary="Import test items",
        description=(
            "JSONL (`application/x-ndjson` or `application/jsonl`: one item per line, the fields of "
            "`POST …/items/`) or CSV (`text/csv`: a header naming `question`, `expected_resource_ids` "
            "(separated by spaces or `;`), `expected_answer`, `expected_outcome`). All or nothing: a bad "
            f"line is a 400 naming it (`fields.line`) and nothing is added. At most "
            f"{MAX_IMPORT_BYTES:,} bytes and {items.MAX_ITEMS_PER_TEST_SET} items per set (admin keys)."
        ),
        tags=TAGS,
        request={NDJSON: OpenApiTypes.STR, "application/jsonl": OpenApiTypes.STR, CSV: OpenApiTypes.STR},
        responses={201: envelope("TestItemsImported", ImportResultSerializer)},
    )
    def post(self, request: Request, workspace_id: str, test_set_id: str) -> Response:
        test_set = items.test_set_get(workspace=self.workspace, test_set_id=test_set_id)
        # An empty body is not parsed: DRF gives an empty mapping instead.
        data = request.data
        body = data.get("body", b"") if isinstance(data, dict) else b""
        csv_format = (request.content_type or "").split(";")[0].strip() == CSV
        imported = items.items_import(test_set=test_set, body=body, csv_format=csv_format)
        return ok({"imported": imported}, status=201)


class TestItemExportApi(WorkspaceApi):
    admin_methods = frozenset({"GET"})

    @extend_schema(
        operation_id="test_items_export",
        summary="Export test items",
        description="Every item as JSONL, in the set's order, each line importable as it is (admin keys).",
        tags=TAGS,
        responses={
            (200, NDJSON): OpenApiResponse(
                response=OpenApiTypes.STR,
                description="One item per line: id, question or messages, expected_resource_ids, "
                "expected_answer, expected_outcome.",
            )
        },
    )
    def get(self, request: Request, workspace_id: str, test_set_id: str) -> StreamingHttpResponse:
        test_set = items.test_set_get(workspace=self.workspace, test_set_id=test_set_id)
        response = StreamingHttpResponse(
            items.items_export_lines(test_set), content_type=f"{NDJSON}; charset=utf-8"
        )
        response["Cache-Control"] = "no-store"
        return response
