"""The transcript export names each reply's access: the filters, groups and
token resources its turn retrieved within, as the prompt trace named them
(``Message.access``). Real turns on every entrance (chat, the stream, the
OpenAI-compatible completions) over real retrieval; generation is the
extractive engine (the embedded default)."""

from __future__ import annotations

from typing import Any

import pytest

from chat.models import Message, MessageRole
from resources.models import Resource
from tests.chat.helpers import ingest_text, sse_events, stream_of
from tests.conftest import Tenant, token_client
from tests.transcripts.conftest import export
from workspaces import tokens

pytestmark = pytest.mark.django_db

QUESTION = "What are the cardiology ward visiting hours?"
OPEN: dict[str, Any] = {"filters": None, "groups": None, "resource_ids": None}


def url(tenant: Tenant, rest: str) -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/{rest}"


@pytest.fixture
def documents(owner: Tenant) -> dict[str, Resource]:
    """One document open to all, one for staff."""
    found = {}
    for name, title, text, groups in [
        ("open", "Ward visits", "Cardiology ward visiting hours are 2 to 4 pm daily.", None),
        ("staff", "Staff visits", "Cardiology ward visiting hours for staff are 6 to 8 am.", ["staff"]),
    ]:
        resource = ingest_text(owner.workspace, title, text)
        resource.metadata = {"kind": name}
        resource.access = {"groups": groups} if groups is not None else None
        resource.save(update_fields=["metadata", "access"])
        found[name] = resource
    return found


def replies(lines: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The exported assistant messages by their end user."""
    return {
        line["external_user_id"]: message
        for line in lines
        for message in line["messages"]
        if message["role"] == "assistant"
    }


def test_each_exported_reply_names_the_access_its_turn_had(
    owner: Tenant, documents: dict[str, Resource]
) -> None:
    admin = owner.client("admin")
    kind = {"type": "eq", "key": "kind", "value": "staff"}
    traced = admin.post(
        url(owner, "chat/"),
        {
            "external_user_id": "key-user",
            "message": QUESTION,
            "filters": kind,
            "groups": ["staff"],
            "include_prompt_trace": True,
        },
        format="json",
    ).json()["data"]
    assert traced["assistant_message"]["grounding"] == "documents"
    admin.post(url(owner, "chat/"), {"external_user_id": "open-user", "message": QUESTION}, format="json")
    minted = tokens.end_user_token_mint(
        workspace=owner.workspace,
        external_user_id="token-user",
        groups=("staff",),
        resource_ids=(documents["open"].id,),
    )
    answered = token_client(minted.token).post(url(owner, "chat/"), {"message": QUESTION}, format="json")
    assert answered.status_code == 200, answered.json()
    completion = owner.client("chat").post(
        url(owner, "openai/v1/chat/completions"),
        {
            "model": "extractive",
            "user": "sdk-user",
            "messages": [{"role": "user", "content": QUESTION}],
            "filters": {"type": "eq", "key": "kind", "value": "open"},
            "groups": [],
        },
        format="json",
    )
    assert completion.status_code == 200, completion.json()

    response, lines = export(admin, owner.workspace.id)

    assert response.status_code == 200
    exported = replies(lines)
    assert exported["key-user"]["access"] == traced["prompt_trace"]["access"]
    assert exported["key-user"]["access"] == {"filters": kind, "groups": ["staff"], "resource_ids": None}
    # An API key that sends neither reads every document: nothing restricted, all named null.
    assert exported["open-user"]["access"] == OPEN
    assert exported["token-user"]["access"] == {
        "filters": None,
        "groups": ["staff"],
        "resource_ids": [str(documents["open"].id)],
    }
    assert exported["sdk-user"]["access"] == {
        "filters": {"type": "eq", "key": "kind", "value": "open"},
        "groups": [],
        "resource_ids": None,
    }
    # User messages carry no access: it is a property of the reply's turn.
    assert all("access" not in m for line in lines for m in line["messages"] if m["role"] == "user")


@pytest.mark.django_db(transaction=True)
def test_a_streamed_reply_stores_its_access(owner: Tenant, documents: dict[str, Resource]) -> None:
    """The turn runs on a worker thread, which sees committed data only."""
    body = {"external_user_id": "u1", "message": QUESTION, "groups": [], "include_prompt_trace": True}
    events = list(
        sse_events(stream_of(owner.client("admin").post(url(owner, "chat/stream/"), body, format="json")))
    )
    trace = next(payload for event, payload in events if event == "prompt_trace")

    _, lines = export(owner.client("admin"), owner.workspace.id)

    assert replies(lines)["u1"]["access"] == trace["access"] == {**OPEN, "groups": []}


def test_redaction_leaves_the_access_as_stored(owner: Tenant, documents: dict[str, Resource]) -> None:
    """``redact=pii`` rewrites message text only; the access is what the
    integrator's request or token said, exported as stored (docs/transcripts.md)."""
    filters = {"type": "ne", "key": "kind", "value": "call 0171 2345678"}
    owner.client("admin").post(
        url(owner, "chat/"),
        {"external_user_id": "u1", "message": f"{QUESTION} Call me on 0171 2345678.", "filters": filters},
        format="json",
    )

    _, lines = export(owner.client("admin"), owner.workspace.id, redact="pii")

    [session, report] = lines
    assert "2345678" not in session["messages"][0]["content"]
    assert session["messages"][1]["access"] == {**OPEN, "filters": filters}
    assert not any(".access" in path for path in report["paths"])


def test_replies_the_integrator_supplied_have_no_access(
    owner: Tenant, documents: dict[str, Resource]
) -> None:
    owner.client("admin").post(
        url(owner, "chat/"),
        {
            "external_user_id": "u1",
            "messages": [
                {"role": "user", "content": "Hello"},
                {"role": "assistant", "content": "Hi, how can I help?"},
                {"role": "user", "content": QUESTION},
            ],
        },
        format="json",
    )

    _, [line] = export(owner.client("admin"), owner.workspace.id)

    assert [m["access"] for m in line["messages"] if m["role"] == "assistant"] == [None, OPEN]


def test_an_export_shows_only_its_workspaces_replies_and_their_stored_access(
    owner: Tenant, outsider: Tenant, documents: dict[str, Resource]
) -> None:
    ingest_text(outsider.workspace, "Ward visits", "Cardiology ward visiting hours are 1 to 3 pm.")
    secret = {"type": "eq", "key": "customer", "value": "outsider-4821"}
    outsider.client("admin").post(
        url(outsider, "chat/"),
        {"external_user_id": "u1", "message": QUESTION, "filters": secret, "groups": ["board"]},
        format="json",
    )
    owner.client("admin").post(
        url(owner, "chat/"),
        {"external_user_id": "u1", "message": QUESTION, "groups": ["staff"]},
        format="json",
    )

    _, lines = export(owner.client("admin"), owner.workspace.id)

    assert "outsider-4821" not in str(lines) and "board" not in str(lines)
    stored = {
        str(m.id): m.access
        for m in Message.objects.filter(session__workspace=owner.workspace, role=MessageRole.ASSISTANT)
    }
    exported = {m["id"]: m["access"] for line in lines for m in line["messages"] if m["role"] == "assistant"}
    assert exported == stored and list(exported.values()) == [{**OPEN, "groups": ["staff"]}]
    assert export(outsider.client("admin"), owner.workspace.id)[0].status_code == 404
