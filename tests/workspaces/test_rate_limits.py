"""Rate limits per API key and per (key, end user), on the real Redis so
that every process shares them. Generation is the extractive engine (the
embedded default)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pytest_django import Settings

from tests.conftest import Tenant
from tests.live import live_server
from workspaces import ratelimit

pytestmark = pytest.mark.django_db


@pytest.fixture
def limits(settings: Settings) -> Iterator[Settings]:
    """Small limits, in a Redis namespace of this test's own."""
    settings.RATE_LIMIT_CHAT_PER_USER_PER_MINUTE = 3
    settings.RATE_LIMIT_CHAT_PER_MINUTE = 100
    settings.RATE_LIMIT_UPLOADS_PER_MINUTE = 2
    settings.RATE_LIMIT_REQUESTS_PER_MINUTE = 100
    yield settings


def chat(tenant: Tenant, user: str, **extra: Any) -> Any:
    return tenant.client("chat").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/chat/",
        {"external_user_id": user, "message": "Hello?", **extra},
        format="json",
    )


def test_one_end_user_gets_429_while_another_of_the_same_key_still_gets_answers(
    owner: Tenant, limits: Settings
) -> None:
    for left in (2, 1, 0):
        response = chat(owner, "alice")
        assert response.status_code == 200
        assert response["RateLimit-Limit"] == "3" and response["RateLimit-Remaining"] == str(left)
        assert 1 <= int(response["RateLimit-Reset"]) <= 60
    over = chat(owner, "alice")
    assert over.status_code == 429
    assert over.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(over["Retry-After"]) <= 60
    assert over["RateLimit-Remaining"] == "0"
    other = chat(owner, "bob")
    assert other.status_code == 200 and other["RateLimit-Remaining"] == "2"


def test_a_workspace_override_beats_the_organizations_which_beats_the_setting(
    owner: Tenant, limits: Settings
) -> None:
    owner.organization.rate_chat_per_user_per_minute = 5
    owner.organization.save()
    assert chat(owner, "carol")["RateLimit-Limit"] == "5"
    owner.workspace.rate_chat_per_user_per_minute = 1
    owner.workspace.save()
    assert chat(owner, "dave")["RateLimit-Limit"] == "1"
    assert chat(owner, "dave").status_code == 429


def test_uploads_and_every_request_have_their_own_buckets(owner: Tenant, limits: Settings) -> None:
    url = f"/api/v1/workspaces/{owner.workspace.id}/resources/"
    client = owner.client("admin")
    for n in range(2):
        assert client.post(url, {"title": f"t{n}", "text": f"text {n}"}, format="json").status_code == 202
    refused = client.post(url, {"title": "t3", "text": "text 3"}, format="json")
    assert refused.status_code == 429 and "upload" in refused.json()["error"]["message"]
    # Reads still work: they count only in the requests bucket.
    listing = client.get(url)
    assert listing.status_code == 200 and int(listing["RateLimit-Limit"]) == 100
    limits.RATE_LIMIT_REQUESTS_PER_MINUTE = 1
    other = owner.client("chat")  # another key: a bucket of its own
    assert other.get(url).status_code == 200
    assert other.get(url).status_code == 429


def test_the_openai_endpoint_is_limited_in_openai_shape(owner: Tenant, limits: Settings) -> None:
    url = f"/api/v1/workspaces/{owner.workspace.id}/openai/v1/chat/completions"
    body = {"model": "extractive", "messages": [{"role": "user", "content": "Hi"}], "user": "erin"}
    for _ in range(3):
        assert owner.client("chat").post(url, body, format="json").status_code == 200
    over = owner.client("chat").post(url, body, format="json")
    assert over.status_code == 429 and "Retry-After" in over
    assert (
        over.json()["error"]["type"] == "rate_limit_error" and over.json()["error"]["code"] == "rate_limited"
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_processes_share_the_counts_through_redis(owner: Tenant, limits: Settings) -> None:
    assert limits.RATE_LIMIT_STORAGE_URL.startswith("redis"), "these limits must be shared: set REDIS_URL"
    user = f"frank-{uuid.uuid4().hex[:6]}"
    assert chat(owner, user).status_code == 200
    assert chat(owner, user).status_code == 200
    with live_server(RATE_LIMIT_CHAT_PER_USER_PER_MINUTE="3", RATE_LIMIT_CHAT_PER_MINUTE="100") as base:
        url = f"{base}/api/v1/workspaces/{owner.workspace.id}/chat/"
        headers = {"X-API-Key": owner.chat_key}
        body = {"external_user_id": user, "message": "Hello?"}
        third = httpx.post(url, json=body, headers=headers, timeout=60)
        assert third.status_code == 200 and third.headers["RateLimit-Remaining"] == "0"
        fourth = httpx.post(url, json=body, headers=headers, timeout=60)
        assert fourth.status_code == 429
    # And this process sees what the other one counted.
    assert chat(owner, user).status_code == 429


def test_without_redis_the_limits_are_per_process(settings: Settings, owner: Tenant) -> None:
    settings.RATE_LIMIT_STORAGE_URL = "memory://"
    settings.RATE_LIMIT_CHAT_PER_USER_PER_MINUTE = 1
    try:
        assert chat(owner, "gina").status_code == 200
        assert chat(owner, "gina").status_code == 429
    finally:
        ratelimit._limiter = None
