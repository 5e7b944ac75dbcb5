"""The console's evaluation pages with the Django test client: test sets
created, imported (all or nothing), edited, exported; runs started, followed
and compared; a dashboard reply made a test item in two actions, and gone
with the end user's data; another organization's objects are 404s."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from chat.models import Message, MessageRole
from chat.transcripts.retention import end_user_data_delete
from console import evaluations as console_evaluations
from evaluations import items, runs
from evaluations.models import EvaluationResult, TestItem, TestSet
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant
from tests.staff import Staff, grant, make_staff
from tests.transcripts.factories import answer_response, conversation, feedback

pytestmark = pytest.mark.django_db

CONSOLE = "/admin/console"


def _set_page(tenant: Tenant, test_set: TestSet) -> str:
    return f"{CONSOLE}/{tenant.workspace.id}/test-sets/{test_set.id}/"


def _upload(staff: Staff, url: str, name: str, body: str) -> Any:
    return staff.client.post(f"{url}import/", {"file": SimpleUploadedFile(name, body.encode())})


def test_a_curator_creates_imports_edits_and_exports_a_test_set(owner: Tenant) -> None:
    curator = make_staff("curator", organization=owner.organization)
    doc = ingest_text(owner.workspace, "Holiday policy", "Unused holiday days expire at the end of March.")
    listing = f"{CONSOLE}/{owner.workspace.id}/test-sets/"
    assert curator.client.post(listing, {"name": ""}).status_code == 400
    created = curator.client.post(listing, {"name": "Regression"})
    assert created.status_code == 302
    test_set = TestSet.objects.get(workspace=owner.workspace, name="Regression")
    url = _set_page(owner, test_set)
    assert created["Location"] == url
    # A bad line: a 400 page naming it, nothing imported.
    bad = f'{{"question": "When?", "expected_resource_ids": ["{doc.id}"]}}\n{{"question": 3}}\n'
    response = _upload(curator, url, "set.jsonl", bad)
    assert response.status_code == 400
    assert "Line 2 is invalid; nothing was imported." in response.content.decode()
    assert not TestItem.objects.filter(test_set=test_set).exists()
    csv_body = f"question,expected_resource_ids,expected_outcome\nWhen do holidays expire?,{doc.id},answer\n"
    assert _upload(curator, url, "set.csv", csv_body).status_code == 302
    assert _upload(curator, url, "set.jsonl", '{"question": "Capital of Peru?"}\n').status_code == 302
    first, second = TestItem.objects.filter(test_set=test_set)
    assert first.expected_resource_ids == [str(doc.id)]
    page = curator.client.get(url).content.decode()
    assert "When do holidays expire?" in page and "Holiday policy" in page
    # Edited: the question, no expected document, the no-answer outcome.
    saved = curator.client.post(
        f"{url}items/{second.id}/",
        {
            f"{second.id}-question": "What is the capital of Peru?",
            f"{second.id}-expected_outcome": "no_answer",
        },
    )
    assert saved.status_code == 302
    second.refresh_from_db()
    assert (second.question, second.expected_outcome) == ("What is the capital of Peru?", "no_answer")
    bad_edit = curator.client.post(f"{url}items/{second.id}/", {f"{second.id}-expected_outcome": "maybe"})
    assert bad_edit.status_code == 400
    assert curator.client.post(f"{url}items/new/", {"new-question": "Anything?"}).status_code == 400
    exported = curator.client.get(f"{url}export/")
    lines = [json.loads(line) for line in exported.content.decode().splitlines()]
    assert [line["question"] for line in lines] == [
        "When do holidays expire?",
        "What is the capital of Peru?",
    ]
    assert curator.client.post(f"{url}items/{first.id}/delete/").status_code == 302
    assert list(TestItem.objects.filter(test_set=test_set)) == [second]


def test_another_organizations_sets_runs_and_replies_are_404s(owner: Tenant, outsider: Tenant) -> None:
    curator = make_staff("curator", organization=owner.organization)
    theirs = items.test_set_create(workspace=outsider.workspace, name="Theirs")
    items.item_create(test_set=theirs, data={"question": "Theirs?"})
    run = runs.run_create(test_set=theirs)
    _, messages = conversation(outsider.workspace)
    mine = items.test_set_create(workspace=owner.workspace, name="Mine")
    paths = [
        _set_page(outsider, theirs),
        f"{_set_page(outsider, theirs)}export/",
        # Their set under my workspace, their run and reply under either.
        _set_page(owner, theirs),
        f"{CONSOLE}/{owner.workspace.id}/evaluations/{run.id}/",
        f"{CONSOLE}/{outsider.workspace.id}/evaluations/{run.id}/",
        f"{CONSOLE}/{owner.workspace.id}/replies/{messages[1].id}/test-item/",
    ]
    for path in paths:
        assert curator.client.get(path).status_code == 404, path
    assert curator.client.post(f"{_set_page(owner, theirs)}run/").status_code == 404
    assert _upload(curator, _set_page(owner, theirs), "x.jsonl", '{"question": "q"}').status_code == 404
    assert not TestItem.objects.filter(test_set=theirs, question="q").exists()
    # A view-only account reads the sets and changes nothing.
    viewer = make_staff("viewer", organization=owner.organization, permissions=False)
    grant(viewer.user, [("evaluations", "view_testset")])
    assert viewer.client.get(_set_page(owner, mine)).status_code == 200
    assert _upload(viewer, _set_page(owner, mine), "x.jsonl", '{"question": "q"}').status_code == 403
    assert viewer.client.post(f"{_set_page(owner, mine)}run/").status_code == 403
    nobody = make_staff("nobody", organization=owner.organization, permissions=False)
    assert nobody.client.get(_set_page(owner, mine)).status_code == 403


def test_a_run_page_follows_the_run_and_compares_it(
    owner: Tenant, django_capture_on_commit_callbacks: Any
) -> None:
    curator = make_staff("curator", organization=owner.organization)
    doc = ingest_text(owner.workspace, "Holiday policy", "Unused holiday days expire at the end of March.")
    test_set = items.test_set_create(workspace=owner.workspace, name="Small")
    items.item_create(
        test_set=test_set,
        data={"question": "When do unused holiday days expire?", "expected_resource_ids": [doc.id]},
    )
    items.item_create(
        test_set=test_set, data={"question": "What is the capital of Peru?", "expected_outcome": "no_answer"}
    )

    def start() -> str:
        with django_capture_on_commit_callbacks(execute=False) as queued:
            response = curator.client.post(f"{_set_page(owner, test_set)}run/")
        assert response.status_code == 302 and len(queued) == 1
        return str(response["Location"])

    first_url = start()
    pending = curator.client.get(first_url).content.decode()
    assert 'http-equiv="refresh"' in pending and 'data-status="pending"' in pending
    first = runs.run_execute(first_url.rstrip("/").rsplit("/", 1)[1])
    assert first is not None and first.status == "completed"
    page = curator.client.get(first_url).content.decode()
    assert 'http-equiv="refresh"' not in page and 'data-done="2" data-total="2"' in page
    assert "Unused holiday days expire at the end of March." in page and "Reply language right" in page
    assert '<strong class="expected">Holiday policy</strong>' in page
    # A second run, worse on purpose (nothing is answerable), compared with the first.
    owner.workspace.answerability_threshold = 0.99
    owner.workspace.save()
    second_url = start()
    assert runs.run_execute(second_url.rstrip("/").rsplit("/", 1)[1]) is not None
    compared = curator.client.get(f"{second_url}?compare={first.id}")
    assert compared.status_code == 200
    html = compared.content.decode()
    assert 'data-worse="1"' in html and "When do unused holiday days expire?" in html
    assert 'data-label="Outcome right This run" data-value="0.5"' in html
    assert 'data-label="Outcome right Baseline" data-value="1.0"' in html
    assert curator.client.get(f"{second_url}?compare=not-a-run").status_code == 404
    # An empty set starts no run: the set's page says why.
    empty = items.test_set_create(workspace=owner.workspace, name="Empty")
    refused = curator.client.post(f"{_set_page(owner, empty)}run/", follow=True)
    assert "The test set has no item." in refused.content.decode()


def test_a_disliked_follow_up_becomes_a_test_item_in_two_actions_and_goes_with_its_user(
    owner: Tenant,
) -> None:
    curator = make_staff("curator", organization=owner.organization)
    doc = ingest_text(owner.workspace, "Refund policy", "Refunds are paid within thirty days.")
    source = {"resource_id": str(doc.id), "passage_id": str(doc.id), "title": doc.title}
    _, messages = conversation(
        owner.workspace,
        external_user_id="alice",
        turns=[
            ("Do you refund orders?", answer_response(("Yes.", source))),
            ("How long does it take?", answer_response(("Within thirty days.", source))),
        ],
    )
    reply = messages[3]
    feedback(reply, rating="down")
    dashboard = curator.client.get(f"{CONSOLE}/{owner.workspace.id}/dashboard/").content.decode()
    form_url = f"{CONSOLE}/{owner.workspace.id}/replies/{reply.id}/test-item/"
    assert f'href="{form_url}"' in dashboard
    # Action 1: the form, preselected with the cited document and an answer.
    form = curator.client.get(form_url)
    html = form.content.decode()
    assert form.status_code == 200
    assert f'<option value="{doc.id}" selected>' in html and '<option value="answer" selected>' in html
    assert curator.client.post(form_url, {"expected_outcome": "answer"}).status_code == 400  # no set named
    # Action 2: submitted into a new set.
    added = curator.client.post(
        form_url,
        {
            "new_test_set": "From feedback",
            "expected_resource_ids": [str(doc.id)],
            "expected_outcome": "answer",
        },
    )
    assert added.status_code == 302
    item = TestItem.objects.get(test_set__workspace=owner.workspace)
    assert item.source_message_id == reply.id and item.test_set.name == "From feedback"
    assert item.question == "" and item.messages == [
        {"role": "user", "content": "Do you refund orders?"},
        {"role": "assistant", "content": "Yes."},
        {"role": "user", "content": "How long does it take?"},
    ]
    assert item.expected_resource_ids == [str(doc.id)]
    # Its run's result holds the same text: deleting alice's data deletes both.
    run = runs.run_execute(runs.run_create(test_set=item.test_set).id)
    assert run is not None and EvaluationResult.objects.filter(run=run).count() == 1
    assert end_user_data_delete(workspace=owner.workspace, external_user_id="alice") == 1
    assert not TestItem.objects.filter(id=item.id).exists()
    assert not EvaluationResult.objects.filter(run=run).exists()
    assert TestSet.objects.filter(id=item.test_set_id).exists()  # the set stays
    assert not Message.objects.filter(role=MessageRole.ASSISTANT, id=reply.id).exists()


def test_an_items_expected_document_beyond_the_offered_ones_stays_choosable(
    owner: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The forms offer the workspace's first documents by title, and the
    items' own expected documents beyond them (read once for the page)."""
    monkeypatch.setattr(console_evaluations, "DOCUMENT_CHOICES", 1)
    curator = make_staff("curator", organization=owner.organization)
    ingest_text(owner.workspace, "A first manual", "The kettle holds 1.7 litres.")
    later = ingest_text(owner.workspace, "Zebra guide", "Zebras sleep standing up.")
    test_set = items.test_set_create(workspace=owner.workspace, name="Beyond")
    item = items.item_create(
        test_set=test_set, data={"question": "How do zebras sleep?", "expected_resource_ids": [later.id]}
    )
    url = _set_page(owner, test_set)
    page = curator.client.get(url).content.decode()
    assert f'value="{later.id}" selected' in page and "Zebra guide" in page
    saved = curator.client.post(
        f"{url}items/{item.id}/",
        {
            f"{item.id}-question": "How do zebras sleep?",
            f"{item.id}-expected_resource_ids": [str(later.id)],
            f"{item.id}-expected_outcome": "answer",
        },
    )
    assert saved.status_code == 302
    item.refresh_from_db()
    assert item.expected_resource_ids == [str(later.id)]
