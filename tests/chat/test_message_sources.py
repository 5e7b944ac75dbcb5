"""The passages a reply cites, read back by the end user who owns the session
(what a client such as the widget shows when a citation is opened)."""

from __future__ import annotations

from typing import Any

import pytest

from chat.backends.scripted import ScriptedBackend
from resources.models import Resource
from retrieval.models import Passage
from tests.chat.helpers import answer, ingest_text
from tests.conftest import Tenant, token_client

pytestmark = pytest.mark.django_db


def _ask(tenant: Tenant, user: str = "alice") -> dict[str, Any]:
    response = tenant.client("chat").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/chat/",
        {"external_user_id": user, "message": "How long do refunds take?"},
        format="json",
    )
    assert response.status_code == 200, response.json()
    data: dict[str, Any] = response.json()["data"]
    return data


def _sources_url(tenant: Tenant, data: dict[str, Any], message: str = "assistant_message") -> str:
    session, message_id = data["session"]["id"], data[message]["id"]
    return f"/api/v1/workspaces/{tenant.workspace.id}/sessions/{session}/messages/{message_id}/sources/"


def test_the_cited_passages_come_back_in_citation_order_each_once(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    ingest_text(owner.workspace, "Refunds", "Refunds take 30 days.\n\nShipping is free over 50 euros.")
    scripted.replies = [answer(("Shipping is free.", 2), ("Refunds take a month.", 1), ("Again.", 2))]
    data = _ask(owner)
    response = owner.client("chat").get(_sources_url(owner, data), {"external_user_id": "alice"})
    assert response.status_code == 200
    items = response.json()["data"]["items"]
    cited = [p["source"]["passage_id"] for p in data["assistant_message"]["response"]["parts"]]
    assert [i["passage_id"] for i in items] == list(dict.fromkeys(cited))
    assert [i["text"] for i in items] == ["Shipping is free over 50 euros.", "Refunds take 30 days."]
    assert items[0]["resource_title"] == "Refunds" and items[0]["page"] is None
    assert set(items[0]) == {"passage_id", "resource_id", "resource_title", "page", "bbox", "text"}
    assert response.json()["data"]["next_cursor"] is None


def test_another_end_user_and_another_organization_get_404(
    owner: Tenant, outsider: Tenant, scripted: ScriptedBackend
) -> None:
    ingest_text(owner.workspace, "Refunds", "Refunds take 30 days.")
    scripted.replies = [answer(("A month.", 1))]
    url = _sources_url(owner, _ask(owner))
    assert owner.client("chat").get(url, {"external_user_id": "bob"}).status_code == 404
    assert outsider.client("admin").get(url, {"external_user_id": "alice"}).status_code == 404
    foreign = url.replace(str(owner.workspace.id), str(outsider.workspace.id))
    assert outsider.client("admin").get(foreign, {"external_user_id": "alice"}).status_code == 404


def test_a_user_message_is_404_and_a_deleted_document_is_left_out(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    ingest_text(owner.workspace, "Refunds", "Refunds take 30 days.")
    ingest_text(owner.workspace, "Shipping", "Shipping is free over 50 euros.")
    scripted.replies = [answer(("A month.", 1), ("Free shipping.", 2))]
    data = _ask(owner)
    client = owner.client("chat")
    assert (
        client.get(_sources_url(owner, data, "user_message"), {"external_user_id": "alice"}).status_code
        == 404
    )
    cited = data["assistant_message"]["response"]["parts"][0]["source"]
    Resource.objects.filter(id=cited["resource_id"]).delete()
    assert not Passage.objects.filter(id=cited["passage_id"]).exists()
    items = client.get(_sources_url(owner, data), {"external_user_id": "alice"}).json()["data"]["items"]
    assert len(items) == 1 and items[0]["passage_id"] != cited["passage_id"]


def _token(tenant: Tenant, user: str, resource_ids: list[str] | None = None) -> str:
    body: dict[str, Any] = {"external_user_id": user}
    if resource_ids is not None:
        body["resource_ids"] = resource_ids
    response = tenant.client("admin").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/end-user-tokens/", body, format="json"
    )
    assert response.status_code == 201, response.json()
    token: str = response.json()["data"]["token"]
    return token


def test_an_end_user_token_reads_its_own_reply_s_sources_not_another_user_s(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    ingest_text(owner.workspace, "Refunds", "Refunds take 30 days.")
    scripted.replies = [answer(("A month.", 1))]
    url = _sources_url(owner, _ask(owner))
    mine = token_client(_token(owner, "alice")).get(url)
    assert mine.status_code == 200 and [i["text"] for i in mine.json()["data"]["items"]] == [
        "Refunds take 30 days."
    ]
    assert token_client(_token(owner, "bob")).get(url).status_code == 404


def test_a_token_narrowed_to_some_documents_reads_no_other_document_s_passage(
    owner: Tenant, scripted: ScriptedBackend
) -> None:
    """The session's earlier turn (asked with a key) cited both documents;
    the user's token now only allows Shipping."""
    ingest_text(owner.workspace, "Refunds", "Refunds take 30 days.")
    shipping = ingest_text(owner.workspace, "Shipping", "Shipping is free over 50 euros.")
    scripted.replies = [answer(("A month.", 1), ("Free shipping.", 2))]
    url = _sources_url(owner, _ask(owner))
    narrowed = token_client(_token(owner, "alice", [str(shipping.id)])).get(url)
    assert narrowed.status_code == 200
    assert [i["resource_title"] for i in narrowed.json()["data"]["items"]] == ["Shipping"]
    unnarrowed = token_client(_token(owner, "alice")).get(url).json()["data"]["items"]
    assert sorted(i["resource_title"] for i in unnarrowed) == ["Refunds", "Shipping"]
