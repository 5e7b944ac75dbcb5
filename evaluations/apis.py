"""Test sets and their items: list, create, read, change, delete, import
(JSONL or CSV) and export (JSONL) (admin keys; docs/evaluation.md)."""

from __future__ import annotations

from typing import Any, ClassVar

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import BaseParser
from rest_framework.request import Request
from rest_framework.response import Response

from daneshyar.api import StringField, ok
from daneshyar.exceptions import PayloadTooLarge
from daneshyar.schema import envelope
from daneshyar.views import (
    DestroyMixin,
    DetailMixin,
    ListCreateMixin,
    Operation,
    SerializerClass,
    UpdateMixin,
)
from evaluations import items, promote
from evaluations.item_lines import MAX_IMPORT_BYTES
from evaluations.models import ExpectedOutcome, TestItem, TestSet
from workspaces.access import WorkspaceGenericApi

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


class TestSetApi(WorkspaceGenericApi):
    tags = TAGS
    row_serializer: ClassVar[SerializerClass] = TestSetSerializer
    schema_name = "TestSet"

    def test_set(self, **path: Any) -> TestSet:
        return items.test_set_get(workspace=self.workspace, test_set_id=path["test_set_id"])

    def row(self, **path: Any) -> Any:
        return self.test_set(**path)


class TestSetListApi(ListCreateMixin, TestSetApi):
    admin_methods = frozenset({"GET", "POST"})
    ordering = ("created_at", "id")
    create_serializer = TestSetInputSerializer
    list_operation = Operation(
        "test_sets_list",
        "List test sets",
        "The workspace's test sets, oldest first, with their item counts (admin keys).",
    )
    create_operation = Operation(
        "test_sets_create",
        "Create a test set",
        "An empty test set (admin keys); add items one by one or import them.",
    )

    def rows(self, owner: Any) -> QuerySet[TestSet]:
        return items.test_set_list(workspace=owner)

    def create(self, owner: Any, data: Any) -> TestSet:
        return items.test_set_create(workspace=owner, name=data["name"])


class TestSetDetailApi(DetailMixin, TestSetApi):
    admin_methods = frozenset({"GET", "PATCH", "DELETE"})
    update_serializer = TestSetInputSerializer
    update_partial = False
    retrieve_operation = Operation("test_sets_get", "Get a test set", "Its name and item count (admin keys).")
    update_operation = Operation(
        "test_sets_update", "Rename a test set", "A new name; the items stay (admin keys)."
    )
    destroy_operation = Operation(
        "test_sets_delete", "Delete a test set", "The test set, its items and its runs (admin keys). 204."
    )

    def update(self, row: TestSet, data: Any) -> TestSet:
        return items.test_set_rename(test_set=row, name=data["name"])


class TestItemApi(TestSetApi):
    row_serializer = TestItemSerializer
    schema_name = "TestItem"

    def row(self, **path: Any) -> Any:
        return items.item_get(test_set=self.test_set(**path), item_id=path["item_id"])


class TestItemListApi(ListCreateMixin, TestItemApi):
    admin_methods = frozenset({"GET", "POST"})
    ordering = ("position", "id")
    create_serializer = promote.ItemCreateSerializer
    list_operation = Operation(
        "test_items_list", "List a test set's items", "In the set's order (admin keys)."
    )
    create_operation = Operation(
        "test_items_create",
        "Add a test item",
        "A question (or a conversation as `messages`, or a stored reply's as "
        "`from_message_id`), the documents expected and the outcome expected (admin keys). An expected "
        "document of another workspace is a 400; another workspace's reply, a 404.",
    )

    def owner(self, **path: Any) -> TestSet:
        return self.test_set(**path)

    def rows(self, owner: TestSet) -> QuerySet[TestItem]:
        return TestItem.objects.filter(test_set=owner)

    def create(self, owner: TestSet, data: Any) -> TestItem:
        return promote.item_create_any(workspace=self.workspace, test_set=owner, data=data)


class TestItemDetailApi(UpdateMixin, DestroyMixin, TestItemApi):
    admin_methods = frozenset({"PATCH", "DELETE"})
    update_serializer = items.ItemInputSerializer
    update_operation = Operation(
        "test_items_update", "Change a test item", "Fields not sent keep their values (admin keys)."
    )
    destroy_operation = Operation(
        "test_items_delete", "Delete a test item", "Earlier runs keep their results for it (admin keys). 204."
    )

    def update(self, row: TestItem, data: Any) -> TestItem:
        return items.item_update(item=row, data=data)


class TestItemImportApi(TestSetApi):
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
        test_set = self.test_set(test_set_id=test_set_id)
        # An empty body is not parsed: DRF gives an empty mapping instead.
        data = request.data
        body = data.get("body", b"") if isinstance(data, dict) else b""
        csv_format = (request.content_type or "").split(";")[0].strip() == CSV
        imported = items.items_import(test_set=test_set, body=body, csv_format=csv_format)
        return ok({"imported": imported}, status=201)


class TestItemExportApi(TestSetApi):
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
        test_set = self.test_set(test_set_id=test_set_id)
        response = StreamingHttpResponse(
            items.items_export_lines(test_set), content_type=f"{NDJSON}; charset=utf-8"
        )
        response["Cache-Control"] = "no-store"
        return response
