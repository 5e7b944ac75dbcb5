"""Test sets and their items: writes, reads, import (JSONL or CSV, all or
nothing; its lines read by evaluations/item_lines.py) and export (JSONL)."""

from __future__ import annotations

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
from evaluations.item_lines import import_rows, line_error
from evaluations.models import ExpectedOutcome, TestItem, TestSet
from resources.models import Resource
from workspaces.models import Workspace

MAX_TEST_SETS_PER_WORKSPACE = 100
MAX_ITEMS_PER_TEST_SET = 5000
MAX_EXPECTED_RESOURCES = 50
MAX_QUESTION_CHARS = 4000


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
                # Each place named ("messages[0].content: ..."), not only that one is wrong.
                places = [f"{name}: {' '.join(problems)}" for name, problems in (exc.fields or {}).items()]
                raise serializers.ValidationError(places or [exc.message]) from None
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


def item_delete(*, item: TestItem) -> None:
    item.delete()


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


def _expected_unknown(workspace: Workspace, rows: list[tuple[int, list[uuid.UUID]]]) -> None:
    """The first line whose expected documents are not all this workspace's
    is a 400 (one query for the whole import)."""
    wanted = {i for _, ids in rows for i in ids}
    known = set(Resource.objects.filter(workspace=workspace, id__in=wanted).values_list("id", flat=True))
    for number, ids in rows:
        unknown = [str(i) for i in ids if i not in known]
        if unknown:
            message = f"No document of this workspace has the id {unknown[0]}."
            raise line_error(number, {"expected_resource_ids": [message]})


def _import_item(test_set: TestSet, number: int, row: Any) -> tuple[TestItem, list[uuid.UUID]]:
    """One row as an unsaved item and its expected documents (400 naming the line)."""
    if not isinstance(row, dict):
        raise line_error(number, {"content": ["Expected a JSON object."]})
    serializer = ItemInputSerializer(data=row)
    if not serializer.is_valid():
        raise line_error(number, dict(serializer.errors))
    data = serializer.validated_data
    return TestItem(test_set=test_set, **_fields(data)), data.get("expected_resource_ids", [])


def items_import(*, test_set: TestSet, body: bytes, csv_format: bool) -> int:
    """Every line becomes an item, or none does: a bad line is a 400 naming
    it (evaluations/item_lines.py: what makes a line unreadable)."""
    room = MAX_ITEMS_PER_TEST_SET - TestItem.objects.filter(test_set=test_set).count()
    items: list[TestItem] = []
    expected: list[tuple[int, list[uuid.UUID]]] = []
    for number, row in import_rows(body, csv_format=csv_format):
        if len(items) >= room:
            # Read no further than the set can hold.
            raise line_error(number, {"content": [f"A test set has at most {MAX_ITEMS_PER_TEST_SET} items."]})
        item, ids = _import_item(test_set, number, row)
        items.append(item)
        expected.append((number, ids))
    if not items:
        raise ValidationFailed("The body holds no item.")
    _expected_unknown(test_set.workspace, expected)
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
