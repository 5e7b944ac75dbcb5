"""Evaluation test sets and items: CRUD, import (JSONL and CSV, all or
nothing) and export, and the tenant boundary (docs/evaluation.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evaluations.models import TestItem, TestSet
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant
from tests.responses import response_body

pytestmark = pytest.mark.django_db


def _sets(tenant: Tenant) -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/test-sets/"


def _create_set(tenant: Tenant, name: str = "Regression") -> dict[str, Any]:
    response = tenant.client().post(_sets(tenant), {"name": name}, format="json")
    assert response.status_code == 201, response.json()
    data: dict[str, Any] = response.json()["data"]
    return data


def _import(tenant: Tenant, set_id: str, body: str, content_type: str = "application/x-ndjson") -> Any:
    return tenant.client().post(f"{_sets(tenant)}{set_id}/import/", body.encode(), content_type=content_type)


def test_test_set_crud(owner: Tenant) -> None:
    created = _create_set(owner)
    assert created["name"] == "Regression" and created["item_count"] == 0
    url = f"{_sets(owner)}{created['id']}/"
    renamed = owner.client().patch(url, {"name": "Nightly"}, format="json")
    assert renamed.status_code == 200 and renamed.json()["data"]["name"] == "Nightly"
    listed = owner.client().get(_sets(owner)).json()["data"]["items"]
    assert [s["id"] for s in listed] == [created["id"]]
    assert owner.client().get(url).json()["data"]["name"] == "Nightly"
    assert owner.client().delete(url).status_code == 204
    assert owner.client().get(url).status_code == 404


def test_items_crud_and_validation(owner: Tenant) -> None:
    doc = ingest_text(owner.workspace, "Holiday policy", "Employees receive 28 days of paid holiday.")
    test_set = _create_set(owner)
    items_url = f"{_sets(owner)}{test_set['id']}/items/"
    client = owner.client()
    created = client.post(
        items_url,
        {"question": "How many holiday days?", "expected_resource_ids": [str(doc.id)]},
        format="json",
    )
    assert created.status_code == 201, created.json()
    item = created.json()["data"]
    assert item["expected_outcome"] == "answer" and item["expected_resource_ids"] == [str(doc.id)]
    conversation = [
        {"role": "user", "content": "I work here."},
        {"role": "assistant", "content": "How can I help?"},
        {"role": "user", "content": "How many holiday days?"},
    ]
    second = client.post(items_url, {"messages": conversation, "expected_outcome": "answer"}, format="json")
    assert second.status_code == 201 and second.json()["data"]["question"] is None
    patched = client.patch(f"{items_url}{item['id']}/", {"expected_outcome": "no_answer"}, format="json")
    assert patched.status_code == 200 and patched.json()["data"]["expected_outcome"] == "no_answer"
    assert [i["id"] for i in client.get(items_url).json()["data"]["items"]] == [
        item["id"],
        second.json()["data"]["id"],
    ]
    for body in (
        {},
        {"question": "q", "messages": conversation},
        {"question": "q", "expected_outcome": "maybe"},
        {"messages": [{"role": "robot", "content": "x"}]},
        {"question": "q", "expected_resource_ids": ["not-a-uuid"]},
    ):
        response = client.post(items_url, body, format="json")
        assert response.status_code == 400, body
        assert response.json()["error"]["code"] == "validation_error"
    assert client.delete(f"{items_url}{item['id']}/").status_code == 204
    assert TestItem.objects.filter(test_set_id=test_set["id"]).count() == 1


def test_jsonl_import_and_export_round_trip(owner: Tenant) -> None:
    doc = ingest_text(owner.workspace, "Holiday policy", "Employees receive 28 days of paid holiday.")
    test_set = _create_set(owner)
    conversation = [{"role": "user", "content": "Holiday days?"}]
    lines: list[dict[str, Any]] = [
        {"question": "How many holiday days?", "expected_resource_ids": [str(doc.id)]},
        {"question": "What is the capital of Peru?", "expected_outcome": "no_answer"},
        {"messages": conversation, "expected_answer": "28 days"},
    ]
    body = "\n".join(json.dumps(line) for line in lines) + "\n\n"
    response = _import(owner, test_set["id"], body)
    assert response.status_code == 201, response.json()
    assert response.json()["data"] == {"imported": 3}
    exported = owner.client().get(f"{_sets(owner)}{test_set['id']}/export/")
    assert exported.status_code == 200 and exported["Content-Type"].startswith("application/x-ndjson")
    rows = [json.loads(line) for line in response_body(exported).decode().splitlines()]
    assert [r.get("question") for r in rows] == [
        "How many holiday days?",
        "What is the capital of Peru?",
        None,
    ]
    assert rows[0]["expected_resource_ids"] == [str(doc.id)] and rows[1]["expected_outcome"] == "no_answer"
    assert rows[2]["messages"] == conversation and rows[2]["expected_answer"] == "28 days"
    # What is exported imports again, as it is.
    again = _import(owner, test_set["id"], "\n".join(json.dumps(r) for r in rows))
    assert again.status_code == 201 and TestItem.objects.filter(test_set_id=test_set["id"]).count() == 6


def test_csv_import(owner: Tenant) -> None:
    doc = ingest_text(owner.workspace, "Holiday policy", "Employees receive 28 days of paid holiday.")
    test_set = _create_set(owner)
    body = (
        "question,expected_resource_ids,expected_outcome,expected_answer\n"
        f'"How many holiday days, in all?",{doc.id},answer,28 days\n'
        "What is the capital of Peru?,,no_answer,\n"
    )
    response = _import(owner, test_set["id"], body, "text/csv")
    assert response.status_code == 201, response.json()
    stored = list(TestItem.objects.filter(test_set_id=test_set["id"]))
    assert [i.question for i in stored] == ["How many holiday days, in all?", "What is the capital of Peru?"]
    assert stored[0].expected_resource_ids == [str(doc.id)] and stored[0].expected_answer == "28 days"
    assert stored[1].expected_outcome == "no_answer" and stored[1].expected_resource_ids == []


@pytest.mark.parametrize(
    ("body", "content_type", "line"),
    [
        (
            '{"question": "ok"}\n{"question": "ok", "expected_outcome": "maybe"}\n',
            "application/x-ndjson",
            "2",
        ),
        ('{"question": "ok"}\n\n{not json\n', "application/x-ndjson", "3"),
        ('{"question": "ok"}\n["a list"]\n', "application/jsonl", "2"),
        ("question,expected_outcome\nok,answer\nfine,sometimes\n", "text/csv", "3"),
        ("title,expected_outcome\nok,answer\n", "text/csv", "1"),
    ],
)
def test_a_bad_line_is_a_400_naming_it_and_nothing_is_written(
    owner: Tenant, body: str, content_type: str, line: str
) -> None:
    test_set = _create_set(owner)
    response = _import(owner, test_set["id"], body, content_type)
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "validation_error" and error["fields"]["line"] == [line]
    assert f"Line {line}" in error["message"]
    assert TestItem.objects.filter(test_set_id=test_set["id"]).count() == 0


def test_import_refuses_another_workspaces_document_and_an_empty_body(
    owner: Tenant, outsider: Tenant
) -> None:
    foreign = ingest_text(outsider.workspace, "Foreign", "Foreign text about holidays.")
    test_set = _create_set(owner)
    line = json.dumps({"question": "q", "expected_resource_ids": [str(foreign.id)]})
    response = _import(owner, test_set["id"], '{"question": "fine"}\n' + line)
    assert response.status_code == 400 and response.json()["error"]["fields"]["line"] == ["2"]
    assert _import(owner, test_set["id"], "\n\n").status_code == 400
    # An empty body (not parsed at all) too.
    assert _import(owner, test_set["id"], "", "text/csv").status_code == 400
    assert _import(owner, test_set["id"], "").status_code == 400
    assert TestItem.objects.filter(test_set_id=test_set["id"]).count() == 0


def test_another_organizations_test_set_and_item_are_404(owner: Tenant, outsider: Tenant) -> None:
    theirs = _create_set(outsider)
    item = (
        outsider.client()
        .post(f"{_sets(outsider)}{theirs['id']}/items/", {"question": "Theirs?"}, format="json")
        .json()["data"]
    )
    mine = _create_set(owner)
    base = _sets(owner)
    client = owner.client()
    for response in (
        client.get(f"{base}{theirs['id']}/"),
        client.patch(f"{base}{theirs['id']}/", {"name": "x"}, format="json"),
        client.delete(f"{base}{theirs['id']}/"),
        client.get(f"{base}{theirs['id']}/items/"),
        client.post(f"{base}{theirs['id']}/items/", {"question": "x"}, format="json"),
        client.patch(f"{base}{mine['id']}/items/{item['id']}/", {"question": "x"}, format="json"),
        client.delete(f"{base}{mine['id']}/items/{item['id']}/"),
        client.get(f"{base}{theirs['id']}/export/"),
        _import(owner, theirs["id"], '{"question": "x"}'),
    ):
        assert response.status_code == 404
        assert theirs["id"] not in response.content.decode()
    assert TestSet.objects.get(id=theirs["id"]).name == "Regression"
    assert TestItem.objects.get(id=item["id"]).question == "Theirs?"


def test_chat_keys_are_refused(owner: Tenant) -> None:
    assert owner.client("chat").get(_sets(owner)).status_code == 403
    assert owner.client("chat").post(_sets(owner), {"name": "x"}, format="json").status_code == 403


def test_an_item_from_a_stored_reply(owner: Tenant, outsider: Tenant) -> None:
    """``from_message_id``: the reply's question (admin keys); another
    workspace's reply, or a user message, is a 404; with a question, a 400."""
    from tests.transcripts.factories import answer_response, conversation

    doc = ingest_text(owner.workspace, "Refund policy", "Refunds are paid within thirty days.")
    _, mine = conversation(
        owner.workspace, turns=[("How long do refunds take?", answer_response(("Thirty days.", None)))]
    )
    _, theirs = conversation(outsider.workspace)
    url = f"{_sets(owner)}{_create_set(owner)['id']}/items/"
    body = {"from_message_id": str(mine[1].id), "expected_resource_ids": [str(doc.id)]}
    created = owner.client().post(url, body, format="json")
    assert created.status_code == 201, created.json()
    data = created.json()["data"]
    assert data["question"] == "How long do refunds take?" and data["source_message_id"] == str(mine[1].id)
    assert data["expected_resource_ids"] == [str(doc.id)] and data["expected_outcome"] == "answer"
    for message in (theirs[1], mine[0]):
        missing = owner.client().post(url, {"from_message_id": str(message.id)}, format="json")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    both = owner.client().post(url, {**body, "question": "And?"}, format="json")
    assert both.status_code == 400 and "from_message_id" in both.json()["error"]["fields"]
    assert owner.client("chat").post(url, body, format="json").status_code == 403
    assert TestItem.objects.filter(test_set__workspace=owner.workspace).count() == 1
