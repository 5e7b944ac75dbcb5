"""Every operation of the OpenAPI schema says what it does: a summary (the
line /api/docs/ lists), a description, and one of the declared tags that
group the operations (daneshyar/config/schema.py)."""

from __future__ import annotations

from typing import Any

import pytest

from daneshyar.config.schema import TAGS

pytestmark = pytest.mark.django_db


def _operations(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{method.upper()} {path}", operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if isinstance(operation, dict) and "operationId" in operation
    ]


def test_every_operation_has_a_summary_and_a_description(schema: dict[str, Any]) -> None:
    missing = [
        name
        for name, operation in _operations(schema)
        if not operation.get("summary", "").strip() or not operation.get("description", "").strip()
    ]
    assert not missing, f"operations without a summary or a description: {missing}"


def test_summaries_are_short_and_distinct(schema: dict[str, Any]) -> None:
    summaries = [operation["summary"] for _, operation in _operations(schema) if "summary" in operation]
    assert all(len(summary) <= 60 and not summary.endswith(".") for summary in summaries)
    assert len(summaries) == len(set(summaries))


def test_every_operation_has_one_declared_tag(schema: dict[str, Any]) -> None:
    declared = {tag["name"] for tag in TAGS}
    assert [tag["name"] for tag in schema["tags"]] == [tag["name"] for tag in TAGS]
    wrong = [
        f"{name}: {operation.get('tags')}"
        for name, operation in _operations(schema)
        if len(operation.get("tags", [])) != 1 or operation["tags"][0] not in declared
    ]
    assert not wrong, f"operations without exactly one declared tag: {wrong}"


def test_every_declared_tag_groups_an_operation(schema: dict[str, Any]) -> None:
    used = {operation["tags"][0] for _, operation in _operations(schema) if operation.get("tags")}
    assert {tag["name"] for tag in TAGS} <= used
