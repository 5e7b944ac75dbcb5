"""Filters and groups on every entrance (search, chat, stream, the
OpenAI-compatible completions): what each caller may read, failing closed,
and named in the prompt trace and the certificate. Generation is the
extractive engine (the embedded default), over real retrieval."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from typing import Any

import jwt
import pytest

from chat.certificates import canonical_json
from resources.models import Resource
from tests.chat.helpers import ingest_text, sse_events, stream_of
from tests.conftest import Tenant, token_client
from workspaces import tokens

pytestmark = pytest.mark.django_db

QUESTION = "What are the cardiology ward visiting hours?"


@pytest.fixture
def documents(owner: Tenant) -> dict[str, Resource]:
    """Three documents answering alike: one open to all, one for staff, one for sales."""
    texts = {
        "open": ("Ward visits", "Cardiology ward visiting hours are 2 to 4 pm daily.", None, "public"),
        "staff": (
            "Staff visits",
            "Cardiology ward visiting hours for staff are 6 to 8 am.",
            ["staff"],
            "rota",
        ),
        "sales": (
            "Sales visits",
            "Cardiology ward visiting hours for buyers are 9 to 10 am.",
            ["sales"],
            "price",
        ),
    }
    found = {}
    for name, (title, text, groups, kind) in texts.items():
        resource = ingest_text(owner.workspace, title, text)
        resource.metadata = {"kind": kind, "dept": "cardiology"}
        resource.access = {"groups": groups} if groups is not None else None
        resource.save(update_fields=["metadata", "access"])
        found[name] = resource
    return found


def url(tenant: Tenant, rest: str) -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/{rest}"


def searched(tenant: Tenant, **body: Any) -> set[str]:
    response = tenant.client("chat").post(url(tenant, "search/"), {"query": QUESTION, **body}, format="json")
    assert response.status_code == 200, response.json()
    return {item["resource_id"] for item in response.json()["data"]["items"]}


def ids(documents: dict[str, Resource], *names: str) -> set[str]:
    return {str(documents[name].id) for name in names}


def cited(data: dict[str, Any]) -> set[str]:
    parts = (data["assistant_message"].get("response") or {}).get("parts") or []
    return {p["source"]["resource_id"] for p in parts if p.get("source")}


def token(tenant: Tenant, **kwargs: Any) -> str:
    return tokens.end_user_token_mint(workspace=tenant.workspace, external_user_id="alice", **kwargs).token


def test_search_with_groups_and_filters(
    owner: Tenant, outsider: Tenant, documents: dict[str, Resource]
) -> None:
    assert searched(owner) == ids(documents, "open", "staff", "sales")  # an API key without groups
    assert searched(owner, groups=["staff"]) == ids(documents, "open", "staff")
    assert searched(owner, groups=[]) == ids(documents, "open")
    assert searched(owner, filters={"type": "in", "key": "kind", "value": ["rota", "price"]}) == ids(
        documents, "staff", "sales"
    )
    rota = {"type": "and", "filters": [{"type": "eq", "key": "dept", "value": "cardiology"}]}
    assert searched(owner, filters=rota, groups=["sales"]) == ids(documents, "open", "sales")
    # Fail closed: no document matches, nothing comes back.
    assert searched(owner, filters={"type": "eq", "key": "dept", "value": "oncology"}) == set()
    assert searched(owner, filters={"type": "ne", "key": "no_such_key", "value": "x"}) == set()
    # The outsider's key is a 404 whatever the body says.
    foreign = outsider.client("chat").post(
        url(owner, "search/"), {"query": QUESTION, "groups": []}, format="json"
    )
    assert foreign.status_code == 404


@pytest.mark.parametrize(
    ("body", "path"),
    [
        (
            {"filters": {"type": "and", "filters": [{"type": "eq", "key": "a", "value": 1}, {"type": "x"}]}},
            None,
        ),
        ({"filters": "kind=rota"}, "filters"),
        ({"groups": "staff"}, "groups"),
        ({"groups": ["staff", ""]}, "groups[1]"),
    ],
)
def test_malformed_filters_and_groups_are_400_naming_the_path(
    owner: Tenant, documents: dict[str, Resource], body: dict[str, Any], path: str | None
) -> None:
    path = path or "filters.filters[1].type"
    for rest, extra in [
        ("search/", {"query": QUESTION}),
        ("chat/", {"message": QUESTION, "external_user_id": "u"}),
    ]:
        response = owner.client("chat").post(url(owner, rest), {**extra, **body}, format="json")
        assert response.status_code == 400, response.json()
        error = response.json()["error"]
        assert error["code"] == "validation_error" and list(error["fields"]) == [path]
    completion = owner.client("chat").post(
        url(owner, "openai/v1/chat/completions"),
        {"model": "extractive", "user": "u", "messages": [{"role": "user", "content": QUESTION}], **body},
        format="json",
    )
    assert completion.status_code == 400 and completion.json()["error"]["param"] == path


def test_chat_with_a_filter_matching_nothing_says_the_documents_dont_answer(
    owner: Tenant, documents: dict[str, Resource]
) -> None:
    nothing = {"type": "eq", "key": "dept", "value": "oncology"}
    response = owner.client("admin").post(
        url(owner, "chat/"),
        {"external_user_id": "u1", "message": QUESTION, "filters": nothing, "include_prompt_trace": True},
        format="json",
    )
    data = response.json()["data"]
    assistant = data["assistant_message"]
    assert assistant["grounding"] == "none" and cited(data) == set()
    assert assistant["content"] == owner.workspace.no_answer_text
    assert data["prompt_trace"]["passages"] == []
    assert data["prompt_trace"]["access"] == {"filters": nothing, "groups": None, "resource_ids": None}


def test_chat_and_completions_read_only_what_the_caller_may(
    owner: Tenant, documents: dict[str, Resource]
) -> None:
    body = {"external_user_id": "u1", "message": QUESTION, "groups": ["sales"], "include_prompt_trace": True}
    data = owner.client("admin").post(url(owner, "chat/"), body, format="json").json()["data"]
    assert cited(data) and cited(data) <= ids(documents, "open", "sales")
    assert {p["resource_id"] for p in data["prompt_trace"]["passages"]} <= ids(documents, "open", "sales")
    assert data["prompt_trace"]["access"]["groups"] == ["sales"]

    # The OpenAI SDK sends extensions with extra_body: top-level fields of the JSON body.
    completion = owner.client("chat").post(
        url(owner, "openai/v1/chat/completions"),
        {
            "model": "extractive",
            "user": "u2",
            "messages": [{"role": "user", "content": QUESTION}],
            "filters": {"type": "eq", "key": "kind", "value": "rota"},
        },
        format="json",
    )
    assert completion.status_code == 200, completion.json()
    extra = completion.json()["daneshyar"]
    assert cited({"assistant_message": extra}) == ids(documents, "staff")


def test_an_end_user_token_reads_with_its_groups_only(owner: Tenant, documents: dict[str, Resource]) -> None:
    minted = owner.client("admin").post(
        url(owner, "end-user-tokens/"), {"external_user_id": "alice", "groups": ["staff"]}, format="json"
    )
    assert minted.status_code == 201, minted.json()
    staff = minted.json()["data"]["token"]

    def chat(bearer: str, **body: Any) -> Any:
        return token_client(bearer).post(url(owner, "chat/"), {"message": QUESTION, **body}, format="json")

    with_groups = chat(staff)
    assert with_groups.status_code == 200 and cited(with_groups.json()["data"]) <= ids(
        documents, "open", "staff"
    )
    without = chat(token(owner))
    assert without.status_code == 200 and cited(without.json()["data"]) <= ids(documents, "open")
    # A filter narrows the token's reach further; groups cannot widen it.
    rota = chat(staff, filters={"type": "eq", "key": "kind", "value": "rota"})
    assert cited(rota.json()["data"]) == ids(documents, "staff")
    price = chat(staff, filters={"type": "eq", "key": "kind", "value": "price"}).json()["data"]
    assert price["assistant_message"]["grounding"] == "none" and cited(price) == set()
    widened = chat(staff, groups=["sales"])
    assert widened.status_code == 400 and list(widened.json()["error"]["fields"]) == ["groups"]
    # A resource the token's user may not read is named like an unknown one.
    named = chat(staff, resource_ids=[str(documents["sales"].id)])
    assert named.status_code == 400 and "resource_ids" in named.json()["error"]["fields"]


def test_an_offline_minted_token_carries_groups_in_a_claim(
    owner: Tenant, documents: dict[str, Resource]
) -> None:
    secret = tokens.signing_secret_rotate(workspace=owner.workspace)
    now = int(time.time())
    claims = {"wid": str(owner.workspace.id), "sub": "bob", "scope": "chat", "iat": now, "exp": now + 600}

    def offline(**extra: Any) -> str:
        return jwt.encode({**claims, "jti": uuid.uuid4().hex, **extra}, secret, algorithm="HS256")

    sales = token_client(offline(groups=["sales"])).post(
        url(owner, "chat/"), {"message": QUESTION}, format="json"
    )
    assert sales.status_code == 200
    assert cited(sales.json()["data"]) and cited(sales.json()["data"]) <= ids(documents, "open", "sales")
    for bad in ["sales", [""], [1], ["x"] * 65]:
        refused = token_client(offline(groups=bad)).post(
            url(owner, "chat/"), {"message": QUESTION}, format="json"
        )
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "token_invalid"


def test_the_certificate_hashes_the_effective_access(owner: Tenant, documents: dict[str, Resource]) -> None:
    filters = {"type": "eq", "key": "kind", "value": "public"}
    data = (
        owner.client("admin")
        .post(
            url(owner, "chat/"),
            {
                "external_user_id": "u1",
                "message": QUESTION,
                "filters": filters,
                "groups": [],
                "certificate": True,
            },
            format="json",
        )
        .json()["data"]
    )
    certificate = data["assistant_message"]["certificate"]
    payload = json.loads(certificate["payload"])
    access: dict[str, Any] = {"filters": filters, "groups": [], "resource_ids": None}
    assert payload["access_sha256"] == hashlib.sha256(canonical_json(access).encode()).hexdigest()
    verified = owner.client("admin").post(
        "/api/v1/certificates/verify",
        {"certificate": certificate, "response": data["assistant_message"]["response"]},
        format="json",
    )
    assert verified.json()["data"]["valid"] is True


@pytest.mark.django_db(transaction=True)
def test_the_stream_reads_only_what_the_caller_may(owner: Tenant, documents: dict[str, Resource]) -> None:
    """The turn runs on a worker thread, which sees committed data only."""
    body = {"external_user_id": "u1", "message": QUESTION, "groups": ["sales"], "include_prompt_trace": True}
    response = owner.client("admin").post(url(owner, "chat/stream/"), body, format="json")
    events = list(sse_events(stream_of(response)))
    trace = next(payload for event, payload in events if event == "prompt_trace")
    assert {p["resource_id"] for p in trace["passages"]} <= ids(documents, "open", "sales")
    final = events[-1][1]
    assert cited({"assistant_message": final}) and cited({"assistant_message": final}) <= ids(
        documents, "open", "sales"
    )
