"""Test sets and their items: writes, reads, import (JSONL or CSV, all or
nothing) and export (JSONL)."""

from __future__ import annotations

import csv
import io
import json
import uuid
from collections.abc import Iterator
from typing import Any

from django.db import transaction
from django.db.models import Count, QuerySet
from rest_framework import serializers

from chat.message_list import conversation_parse
from daneshyar.api import StringField, uuid_or_404
from daneshyar.exceptions import ApplicationError, NotFound, ValidationFailed
from evaluations.models import ExpectedOutcome, TestItem, TestSet
from resources.models import Resource
from workspaces.models import Workspace

MAX_TEST_SETS_PER_WORKSPACE = 100
MAX_ITEMS_PER_TEST_SET = 5000
MAX_IMPORT_BYTES = 2 * 1024 * 1024
MAX_EXPECTED_RESOURCES = 50
MAX_QUESTION_CHARS = 4000
CSV_COLUMNS = ("question", "expected_resource_ids", "expected_answer", "expected_outcome")


class ItemInputSerializer(serializers.Serializer[Any]):
    question = StringField(
        required=False, allow_blank=True, max_length=MAX_QUESTION_CHARS, help_text="A single question."
    )
    messages = serializers.JSONField(
        required=False,
        allow_null=True,
        help_text="Or a conversation ending with the user's question: [{role, content}], as the chat "
        "endpoint's `messages`. Exactly one of question and messages.",
    )
    expected_resource_ids = serializers.ListField(
        child=serializers.UUIDField(),
        required=False,
        max_length=MAX_EXPECTED_RESOURCES,
        help_text="The workspace's documents that should be retrieved (and cited); empty: none expected.",
    )
    expected_answer = StringField(required=False, allow_blank=True, max_length=20000)
    expected_outcome = serializers.ChoiceField(
        choices=ExpectedOutcome.choices, required=False, help_text="Default answer."
    )

    class Meta:
        ref_name = "TestItemInput"

    def validate_messages(self, value: Any) -> Any:
        if value is not None:
            try:
                conversation_parse(value)
            except ApplicationError as exc:
                raise serializers.ValidationError(exc.message) from None
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if self.partial:
            return attrs
        has_question = bool(attrs.get("question", "").strip())
        if has_question == (attrs.get("messages") is not None):
            raise serializers.ValidationError({"question": ["Send exactly one of question and messages."]})
        return attrs


def test_set_list(*, workspace: Workspace) -> QuerySet[TestSet]:
    return TestSet.objects.filter(workspace=workspace).annotate(item_count=Count("items"))


def test_set_get(*, workspace: Workspace, test_set_id: object) -> TestSet:
    """Another workspace's test set, or a malformed id, is a 404 like a missing one."""
    found = test_set_list(workspace=workspace).filter(id=uuid_or_404(test_set_id)).first()
    if found is None:
        raise NotFound()
    return found


def test_set_create(*, workspace: Workspace, name: str) -> TestSet:
    if TestSet.objects.filter(workspace=workspace).count() >= MAX_TEST_SETS_PER_WORKSPACE:
        raise ValidationFailed(f"A workspace has at most {MAX_TEST_SETS_PER_WORKSPACE} test sets.")
    created = TestSet.objects.create(workspace=workspace, name=name)
    return test_set_get(workspace=workspace, test_set_id=created.id)


def test_set_rename(*, test_set: TestSet, name: str) -> TestSet:
    test_set.name = name
    test_set.save(update_fields=["name"])
    return test_set


def item_get(*, test_set: TestSet, item_id: object) -> TestItem:
    found = TestItem.objects.filter(test_set=test_set, id=uuid_or_404(item_id)).first()
    if found is None:
        raise NotFound()
    return found


def _resources_check(workspace: Workspace, ids: list[uuid.UUID], field: str) -> None:
    """An id that names no document of this workspace (another's included) is a 400."""
    known = set(Resource.objects.filter(workspace=workspace, id__in=ids).values_list("id", flat=True))
    unknown = [str(i) for i in ids if i not in known]
    if unknown:
        raise ValidationFailed(
            "The request has invalid fields.",
            fields={field: [f"No document of this workspace has the id {unknown[0]}."]},
        )


def _fields(data: dict[str, Any]) -> dict[str, Any]:
    fields = dict(data)
    if "expected_resource_ids" in fields:
        fields["expected_resource_ids"] = [str(i) for i in dict.fromkeys(fields["expected_resource_ids"])]
    if "question" in fields and "messages" not in fields and fields["question"].strip():
        fields["messages"] = None
    if fields.get("messages") is not None:
        fields["question"] = ""
    return fields


def _next_position(test_set: TestSet, adding: int) -> int:
    """The position after the set's last item; 400 when ``adding`` more would overfill it."""
    items = TestItem.objects.filter(test_set=test_set)
    if items.count() + adding > MAX_ITEMS_PER_TEST_SET:
        raise ValidationFailed(f"A test set has at most {MAX_ITEMS_PER_TEST_SET} items.")
    last = items.order_by("-position").values_list("position", flat=True).first()
    return 0 if last is None else last + 1


def item_create(*, test_set: TestSet, data: dict[str, Any]) -> TestItem:
    _resources_check(test_set.workspace, data.get("expected_resource_ids", []), "expected_resource_ids")
    position = _next_position(test_set, 1)
    return TestItem.objects.create(test_set=test_set, position=position, **_fields(data))


def item_update(*, item: TestItem, data: dict[str, Any]) -> TestItem:
    _resources_check(item.test_set.workspace, data.get("expected_resource_ids", []), "expected_resource_ids")
    for name, value in _fields(data).items():
        setattr(item, name, value)
    if bool(item.question.strip()) == (item.messages is not None):
        raise ValidationFailed(
            "The request has invalid fields.",
            fields={"question": ["An item has exactly one of question and messages."]},
        )
    item.save()
    return item


def _jsonl_rows(text: str) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise _line_error(number, {"content": [f"Not JSON: {exc.msg}."]}) from None


def _csv_rows(text: str) -> Iterator[tuple[int, Any]]:
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    if "question" not in header or any(name not in CSV_COLUMNS for name in header):
        raise _line_error(1, {"content": [f"The header must name columns among {', '.join(CSV_COLUMNS)}."]})
    for row in reader:
        if None in row:
            raise _line_error(reader.line_num, {"content": ["More values than columns."]})
        fields: dict[str, Any] = {k: v for k, v in row.items() if v not in (None, "")}
        ids = fields.pop("expected_resource_ids", "")
        fields["expected_resource_ids"] = ids.replace(";", " ").split()
        yield reader.line_num, fields


def _line_error(number: int, fields: dict[str, Any]) -> ValidationFailed:
    return ValidationFailed(
        f"Line {number} is invalid; nothing was imported.", fields={"line": [str(number)], **fields}
    )


def _decoded(body: bytes) -> str:
    if len(body) > MAX_IMPORT_BYTES:
        raise ValidationFailed(f"An import is at most {MAX_IMPORT_BYTES} bytes.")
    try:
        return body.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValidationFailed("The body is not UTF-8 text.") from None


def items_import(*, test_set: TestSet, body: bytes, csv_format: bool) -> int:
    """Every line becomes an item, or none does: a bad line is a 400 naming it."""
    text = _decoded(body)
    rows = _csv_rows(text) if csv_format else _jsonl_rows(text)
    items: list[TestItem] = []
    workspace = test_set.workspace
    for number, row in rows:
        if not isinstance(row, dict):
            raise _line_error(number, {"content": ["Expected a JSON object."]})
        serializer = ItemInputSerializer(data=row)
        if not serializer.is_valid():
            raise _line_error(number, dict(serializer.errors))
        data = serializer.validated_data
        try:
            _resources_check(workspace, data.get("expected_resource_ids", []), "expected_resource_ids")
        except ValidationFailed as exc:
            raise _line_error(number, dict(exc.fields or {})) from None
        items.append(TestItem(test_set=test_set, **_fields(data)))
    if not items:
        raise ValidationFailed("The body holds no item.")
    with transaction.atomic():
        start = _next_position(test_set, len(items))
        for offset, item in enumerate(items):
            item.position = start + offset
        TestItem.objects.bulk_create(items)
    return len(items)


def item_json(item: TestItem) -> dict[str, Any]:
    """An item as it is imported (one JSONL line) plus its id."""
    data: dict[str, Any] = {"id": str(item.id)}
    if item.messages is not None:
        data["messages"] = item.messages
    else:
        data["question"] = item.question
    data["expected_resource_ids"] = item.expected_resource_ids
    data["expected_answer"] = item.expected_answer
    data["expected_outcome"] = item.expected_outcome
    return data


def items_export_lines(test_set: TestSet) -> Iterator[str]:
    for item in TestItem.objects.filter(test_set=test_set).iterator():
        yield json.dumps(item_json(item), ensure_ascii=False) + "\n"
