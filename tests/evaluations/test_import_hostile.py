"""Hostile imports of test items (evaluations/item_lines.py): through the API
and the console's upload, every line Python or PostgreSQL cannot take is a
400 naming it, never a 500, and nothing of the import is stored; a UTF-8
byte-order mark, CRLF line ends and a U+2028 inside a JSON string are read
as what they are."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from evaluations import items
from evaluations.item_lines import MAX_IMPORT_BYTES
from evaluations.models import TestItem, TestSet
from tests.conftest import Tenant
from tests.staff import make_staff

pytestmark = pytest.mark.django_db

GOOD = b'{"question": "How long do refunds take?"}\n'
CSV_HEADER = b"question,expected_outcome\nHow long do refunds take?,answer\n"
# One more than a line may be (MAX_JSON_BODY_BYTES' default: a line is one item).
LONG = 1_048_576 + 1

HOSTILE: dict[str, tuple[bytes, str, str, str]] = {
    # name: (body, content type, the line named, a word of the reason)
    "json nested 100,000 deep": (
        GOOD + b'{"question": "q", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
        "application/x-ndjson",
        "2",
        "nested deeper",
    ),
    "a 5,000-digit number": (
        GOOD + b'{"question": "q", "expected_answer": ' + b"7" * 5000 + b"}\n",
        "application/jsonl",
        "2",
        "digits",
    ),
    "a CSV field over 131,072 characters": (
        CSV_HEADER + b'"' + b"a" * 140_000 + b'",answer\n',
        "text/csv",
        "3",
        "field larger than field limit",
    ),
    "JSONL bytes that are not UTF-8": (
        GOOD + b'{"question": "caf\xe9?"}\n',
        "application/x-ndjson",
        "2",
        "UTF-8",
    ),
    "CSV bytes that are not UTF-8": (CSV_HEADER + b"caf\xe9?,answer\n", "text/csv", "3", "UTF-8"),
    "a NUL byte in JSONL": (GOOD + GOOD + b'{"question": "a\x00b"}\n', "application/x-ndjson", "3", "NUL"),
    "a NUL byte in CSV": (CSV_HEADER + b"a\x00b,answer\n", "text/csv", "3", "NUL"),
    "a line over the bound": (
        GOOD + json.dumps({"question": "q", "expected_answer": "x" * LONG}).encode(),
        "application/x-ndjson",
        "2",
        "at most",
    ),
    "a NUL escaped in JSON": (GOOD + b'{"question": "a\\u0000b"}\n', "application/x-ndjson", "2", "Null"),
    "a lone surrogate in a conversation": (
        b'{"messages": [{"role": "user", "content": "\\ud800"}]}\n',
        "application/x-ndjson",
        "1",
        "messages[0].content",
    ),
}


def _set(tenant: Tenant) -> TestSet:
    return items.test_set_create(workspace=tenant.workspace, name="Hostile")


def _api_import(tenant: Tenant, test_set: TestSet, body: bytes, content_type: str) -> Any:
    url = f"/api/v1/workspaces/{tenant.workspace.id}/test-sets/{test_set.id}/import/"
    return tenant.client().post(url, body, content_type=content_type)


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_line_is_a_400_naming_it(owner: Tenant, case: str) -> None:
    body, content_type, line, reason = HOSTILE[case]
    test_set = _set(owner)
    response = _api_import(owner, test_set, body, content_type)
    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert error["code"] == "validation_error" and error["fields"]["line"] == [line]
    assert f"Line {line} is invalid" in error["message"]
    assert reason in json.dumps(error["fields"], ensure_ascii=False), error
    assert not TestItem.objects.filter(test_set=test_set).exists()


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_upload_in_the_console_is_a_400_page_naming_the_line(owner: Tenant, case: str) -> None:
    body, content_type, line, _ = HOSTILE[case]
    curator = make_staff("curator", organization=owner.organization)
    test_set = _set(owner)
    name = "items.csv" if content_type == "text/csv" else "items.jsonl"
    url = f"/admin/console/{owner.workspace.id}/test-sets/{test_set.id}/import/"
    response = curator.client.post(url, {"file": SimpleUploadedFile(name, body)})
    assert response.status_code == 400
    assert f"Line {line} is invalid; nothing was imported." in response.content.decode()
    assert not TestItem.objects.filter(test_set=test_set).exists()


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"\xef\xbb\xbf" + GOOD + GOOD, "application/x-ndjson"),
        (b"\xef\xbb\xbf" + CSV_HEADER + b"And the kettle?,answer\n", "text/csv"),
        (GOOD.replace(b"\n", b"\r\n") * 2, "application/jsonl"),
        (CSV_HEADER.replace(b"\n", b"\r\n") + b"And the kettle?,answer\r\n", "text/csv"),
    ],
)
def test_a_byte_order_mark_and_crlf_line_ends_are_read_past(
    owner: Tenant, body: bytes, content_type: str
) -> None:
    test_set = _set(owner)
    response = _api_import(owner, test_set, body, content_type)
    assert response.status_code == 201, response.content[:300]
    questions = list(TestItem.objects.filter(test_set=test_set).values_list("question", flat=True))
    assert len(questions) == 2 and questions[0] == "How long do refunds take?"


def test_a_line_separator_inside_a_json_string_does_not_split_its_line(owner: Tenant) -> None:
    """U+2028 is legal inside a JSON string; ``str.splitlines`` split on it."""
    test_set = _set(owner)
    question = "Refunds\u2028or returns?"
    body = json.dumps({"question": question}, ensure_ascii=False).encode() + b"\n" + GOOD
    response = _api_import(owner, test_set, body, "application/x-ndjson")
    assert response.status_code == 201, response.content[:300]
    assert TestItem.objects.filter(test_set=test_set).first().question == question  # type: ignore[union-attr]


def test_an_import_up_to_its_bound_is_taken(owner: Tenant) -> None:
    """Over MAX_JSON_BODY_BYTES (1 MiB), under the import's 2 MiB: imported."""
    test_set = _set(owner)
    line = json.dumps({"question": "q" * 3000}).encode()
    body = b"\n".join([line] * 500)
    assert 1_048_576 < len(body) < MAX_IMPORT_BYTES
    response = _api_import(owner, test_set, body, "application/x-ndjson")
    assert response.status_code == 201, response.content[:300]
    assert response.json()["data"] == {"imported": 500}


def test_an_import_past_what_the_set_holds_stops_at_the_line_that_overfills_it(
    owner: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(items, "MAX_ITEMS_PER_TEST_SET", 3)
    test_set = _set(owner)
    items.item_create(test_set=test_set, data={"question": "Already there?"})
    response = _api_import(owner, test_set, GOOD * 3, "application/x-ndjson")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["fields"]["line"] == ["3"] and "at most 3 items" in error["fields"]["content"][0]
    assert TestItem.objects.filter(test_set=test_set).count() == 1
