"""What an end-user token can and cannot do on the routes: the token decides
the end user, its resource_ids narrow retrieval, admin routes refuse it,
idempotency records and rate limits are per end user. Generation is the
extractive engine (the embedded default)."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_django import Settings

from chat.models import Session
from chat.services.turn.history import TurnContext
from chat.services.turn.retrieve import turn_retrieve
from languages import ENGLISH
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant, token_client
from tests.transcripts.factories import conversation
from workspaces import tokens
from workspaces.models import IdempotencyRecord

pytestmark = pytest.mark.django_db


def token(tenant: Tenant, user: str = "alice", **kwargs: Any) -> str:
    return tokens.end_user_token_mint(workspace=tenant.workspace, external_user_id=user, **kwargs).token


def url(tenant: Tenant, rest: str = "") -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/{rest}"


def chat(tenant: Tenant, bearer: str, **body: Any) -> Any:
    return token_client(bearer).post(url(tenant, "chat/"), {"message": "Hello?", **body}, format="json")


def test_a_token_reads_only_its_own_users_sessions(owner: Tenant) -> None:
    mine, _ = conversation(owner.workspace, external_user_id="alice", title="Alice asks")
    theirs, their_messages = conversation(owner.workspace, external_user_id="bob", title="Bob asks")
    client = token_client(token(owner, "alice"))
    listed = client.get(url(owner, "sessions/")).json()["data"]["items"]
    assert [s["id"] for s in listed] == [str(mine.id)]
    assert client.get(url(owner, f"sessions/{mine.id}/")).status_code == 200
    assert client.get(url(owner, f"sessions/{mine.id}/messages/")).status_code == 200
    session = url(owner, f"sessions/{theirs.id}/")
    assert client.get(session).status_code == 404
    assert client.get(session + "messages/").status_code == 404
    assert client.patch(session, {"title": "mine now"}, format="json").status_code == 404
    assert client.delete(session).status_code == 404
    feedback = client.post(
        session + f"messages/{their_messages[1].id}/feedback/", {"rating": "down"}, format="json"
    )
    assert feedback.status_code == 404
    assert Session.objects.get(pk=theirs.pk).title == "Bob asks"
    assert (
        client.patch(url(owner, f"sessions/{mine.id}/"), {"title": "Renamed"}, format="json").status_code
        == 200
    )
    assert client.delete(url(owner, f"sessions/{mine.id}/")).status_code == 204


def test_the_token_decides_the_end_user(owner: Tenant) -> None:
    bearer = token(owner, "alice")
    absent = chat(owner, bearer)
    assert absent.status_code == 200
    session_id = absent.json()["data"]["session"]["id"]
    assert Session.objects.get(pk=session_id).external_user_id == "alice"
    assert chat(owner, bearer, external_user_id="alice").status_code == 200
    other = chat(owner, bearer, external_user_id="bob")
    assert other.status_code == 403 and other.json()["error"]["code"] == "forbidden"
    client = token_client(bearer)
    assert client.get(url(owner, "sessions/"), {"external_user_id": "bob"}).status_code == 403
    assert client.get(url(owner, "sessions/"), {"external_user_id": "alice"}).status_code == 200
    completion = {"model": "extractive", "messages": [{"role": "user", "content": "Hi"}]}
    openai = url(owner, "openai/v1/chat/completions")
    assert client.post(openai, completion, format="json").status_code == 200
    assert client.post(openai, {**completion, "user": "bob"}, format="json").status_code == 403
    assert not Session.objects.filter(external_user_id="bob").exists()


def test_feedback_with_a_token_is_the_token_users(owner: Tenant) -> None:
    session, messages = conversation(owner.workspace, external_user_id="alice", title="Alice asks")
    feedback_url = url(owner, f"sessions/{session.id}/messages/{messages[1].id}/feedback/")
    client = token_client(token(owner, "alice"))
    created = client.post(feedback_url, {"rating": "up"}, format="json")
    assert created.status_code == 201 and created.json()["data"]["external_user_id"] == "alice"
    refused = client.post(feedback_url, {"rating": "up", "external_user_id": "bob"}, format="json")
    assert refused.status_code == 403


def test_a_token_cannot_ask_for_the_prompt_trace(owner: Tenant, settings: Settings) -> None:
    settings.PROMPT_TRACE_ENABLED = True
    response = chat(owner, token(owner), include_prompt_trace=True)
    assert response.status_code == 403
    assert chat(owner, token(owner), certificate=True).json()["data"]["assistant_message"]["certificate"]


@pytest.mark.parametrize(
    ("method", "rest", "body"),
    [
        ("get", "", None),
        ("patch", "", {"name": "mine"}),
        ("delete", "", None),
        ("get", "resources/", None),
        ("post", "resources/", {"title": "t", "text": "x"}),
        ("post", "search/", {"query": "claims"}),
        ("get", "transcripts/", None),
        ("delete", "end-users/alice/", None),
        ("get", "guard-rules/", None),
        ("post", "end-user-tokens/", {"external_user_id": "alice"}),
        ("post", "signing-secret/", {}),
    ],
)
def test_admin_and_integrator_routes_refuse_a_token_with_401(
    owner: Tenant, method: str, rest: str, body: Any
) -> None:
    client = token_client(token(owner))
    response = getattr(client, method)(url(owner, rest), body, format="json")
    assert response.status_code == 401
    error = response.json()["error"]
    assert error["code"] == "unauthenticated" and "end-user routes" in error["message"]


def test_global_routes_other_than_models_refuse_a_token(owner: Tenant) -> None:
    client = token_client(token(owner))
    assert client.get("/api/v1/models/").status_code == 200
    assert client.get("/api/v1/workspaces/").status_code == 401
    assert client.get("/api/v1/certificates/keys").status_code == 401


def test_resource_ids_narrow_retrieval_to_those_documents(owner: Tenant) -> None:
    wards = ingest_text(owner.workspace, "Wards", "Cardiology ward visiting hours are 2 to 4 pm daily.")
    menu = ingest_text(owner.workspace, "Menu", "The cafeteria serves lentil soup on Fridays.")
    question = "What are the cardiology ward visiting hours?"

    def cited(bearer: str, **body: Any) -> set[str]:
        response = chat(owner, bearer, message=question, **body)
        assert response.status_code == 200, response.json()
        parts = response.json()["data"]["assistant_message"]["response"]["parts"]
        return {p["source"]["resource_id"] for p in parts if p["source"]}

    assert str(wards.id) in cited(token(owner))  # unnarrowed: the wards answer
    narrowed = token(owner, resource_ids=[menu.id])
    assert str(wards.id) not in cited(narrowed)
    # A request-level filter stays inside the token's: outside it is an unknown resource.
    outside = chat(owner, narrowed, message=question, resource_ids=[str(wards.id)])
    assert outside.status_code == 400 and "resource_ids" in outside.json()["error"]["fields"]
    # Once every resource of the token is gone, the token retrieves nothing rather than everything.
    menu.delete()
    gone = chat(owner, narrowed, message=question)
    assert gone.status_code == 403


def test_a_chosen_document_outside_a_tokens_resources_is_ignored(owner: Tenant) -> None:
    """After a "which one do you mean?" form, the user's answer names a
    document by its title: one outside the token's resources is ignored."""
    wards = ingest_text(owner.workspace, "Wards", "Cardiology ward visiting hours are 2 to 4 pm daily.")
    menu = ingest_text(owner.workspace, "Menu", "The cafeteria serves lentil soup on Fridays.")
    context = TurnContext(
        question="Wards", language=ENGLISH, chosen=wards.id, chosen_question="What are the visiting hours?"
    )
    found = turn_retrieve(workspace=owner.workspace, context=context, resource_ids=[], allowed=[menu.id])
    assert found.passages and {p.resource_id for p in found.passages} == {menu.id}
    unfiltered = turn_retrieve(workspace=owner.workspace, context=context, resource_ids=[])
    assert {p.resource_id for p in unfiltered.passages} == {wards.id}


def test_idempotency_records_are_per_end_user(owner: Tenant) -> None:
    alice, bob = token_client(token(owner, "alice")), token_client(token(owner, "bob"))
    body = {"message": "Hello?"}
    first = alice.post(url(owner, "chat/"), body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    replay = token_client(token(owner, "alice")).post(
        url(owner, "chat/"), body, format="json", HTTP_IDEMPOTENCY_KEY="k-1"
    )
    assert first.status_code == replay.status_code == 200 and replay["Idempotent-Replayed"] == "true"
    assert replay.json() == first.json()
    other = bob.post(url(owner, "chat/"), body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert other.status_code == 200 and other.get("Idempotent-Replayed") is None
    assert other.json()["data"]["session"]["id"] != first.json()["data"]["session"]["id"]
    owners = IdempotencyRecord.objects.filter(key="k-1").values_list("api_key", "external_user_id")
    assert sorted((str(key), user) for key, user in owners) == [("None", "alice"), ("None", "bob")]


def test_rate_limits_apply_per_end_user_of_a_token(owner: Tenant, settings: Settings) -> None:
    settings.RATE_LIMIT_CHAT_PER_USER_PER_MINUTE = 2
    owner.workspace.rate_requests_per_minute = 50
    owner.workspace.save()
    alice, bob = token(owner, "alice"), token(owner, "bob")
    assert [chat(owner, alice).status_code for _ in range(3)] == [200, 200, 429]
    over = chat(owner, alice)
    assert over.json()["error"]["code"] == "rate_limited" and int(over["Retry-After"]) >= 1
    assert chat(owner, bob).status_code == 200
    # The workspace's own limits apply to its tokens' requests.
    assert token_client(bob).get(url(owner, "sessions/"))["RateLimit-Limit"] == "50"
