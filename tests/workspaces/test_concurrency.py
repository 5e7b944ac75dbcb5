"""The cap on requests of one API key in progress at once
(workspaces/concurrency.py), on the real Redis: issue 23, "nothing caps
concurrent requests per key". Generation is the scripted stand-in for a
generative model (tests/conftest.py ``scripted``)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pytest_django import Settings

from chat.backends.scripted import ScriptedBackend
from tests.chat.helpers import answer, stream_of
from tests.conftest import Tenant, token_client
from tests.live import SCRIPTED_REPLY, live_server
from workspaces import concurrency, tokens

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def turns_stored(request: pytest.FixtureRequest) -> Iterator[None]:
    """A stream the test closes unread goes on in its worker thread and
    stores the reply (chat/streaming.py); wait for those threads before the
    test's database is flushed (a flush racing their last write deadlocks)."""
    request.getfixturevalue("transactional_db")  # torn down after this one
    yield
    for thread in threading.enumerate():
        if thread.name.startswith("chat-turn-"):
            thread.join(timeout=60)


def stream(tenant: Tenant) -> Any:
    """A chat stream the test has not read yet: a request still in progress."""
    return tenant.client("chat").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/chat/stream/",
        {"external_user_id": "u1", "message": "Tell me"},
        format="json",
    )


def sessions(tenant: Tenant) -> Any:
    url = f"/api/v1/workspaces/{tenant.workspace.id}/sessions/"
    return tenant.client("chat").get(url, {"external_user_id": "u1"})


def test_a_key_at_its_cap_gets_429_until_a_stream_ends_and_other_keys_go_on(
    owner: Tenant, outsider: Tenant, settings: Settings, scripted: ScriptedBackend
) -> None:
    settings.MAX_CONCURRENT_REQUESTS_PER_KEY = 2
    scripted.default = answer(("An answer.", None))
    first, second = stream(owner), stream(owner)
    assert (first.status_code, second.status_code) == (200, 200)

    over = sessions(owner)
    assert over.status_code == 429
    assert over.json()["error"]["code"] == "rate_limited"
    assert "2 requests in progress" in over.json()["error"]["message"]
    assert over["Retry-After"] == "1"
    assert sessions(outsider).status_code == 200  # another organization's key is not held

    list(stream_of(first))  # the stream ends: its slot is free again
    first.close()
    for _ in range(3):  # a plain request gives its slot back when it has answered
        assert sessions(owner).status_code == 200
    second.close()  # a stream its client left unread
    assert stream(owner).status_code == 200


def test_no_cap_with_zero(owner: Tenant, settings: Settings, scripted: ScriptedBackend) -> None:
    settings.MAX_CONCURRENT_REQUESTS_PER_KEY = 0
    held = [stream(owner) for _ in range(5)]
    assert [response.status_code for response in held] == [200] * 5
    for response in held:
        response.close()


@pytest.mark.parametrize("backend", ["redis", "memory"])
def test_a_slot_whose_request_never_ended_comes_back_after_its_lease(
    backend: str, settings: Settings
) -> None:
    slots = concurrency.RedisSlots(settings.REDIS_URL) if backend == "redis" else concurrency.MemorySlots()
    name = f"test:{uuid.uuid4()}"
    assert slots.acquire(name, "a", limit=1, lease=0.3)
    assert not slots.acquire(name, "b", limit=1, lease=0.3)
    time.sleep(0.5)  # the process holding "a" died: nobody released it
    assert slots.acquire(name, "b", limit=1, lease=0.3)
    slots.release(name, "b")
    assert slots.held(name) == 0


@pytest.mark.slow
def test_a_stream_gives_its_slot_back_when_its_client_goes_away(owner: Tenant) -> None:
    """A real server: the client drops the connection mid-stream (the model
    is still silent); the server notices at its next heartbeat and the
    key's one slot is free again."""
    env = {
        "MAX_CONCURRENT_REQUESTS_PER_KEY": "1",
        "SCRIPTED": "1",
        "SCRIPTED_REPLY": SCRIPTED_REPLY,
        "SCRIPTED_FIRST_TOKEN_DELAY": "5",
        "SSE_HEARTBEAT_SECONDS": "0.2",
    }
    headers = {"X-API-Key": owner.chat_key}
    url = f"/api/v1/workspaces/{owner.workspace.id}/"
    listing = url + "sessions/?external_user_id=u1"
    with live_server(**env) as base, httpx.Client(base_url=base, headers=headers, timeout=10) as client:
        body = {"external_user_id": "u1", "message": "Tell me"}
        with client.stream("POST", url + "chat/stream/", json=body) as response:
            assert response.status_code == 200
            next(response.iter_lines())
            assert client.get(listing).status_code == 429
        # The connection is closed here, 4 s before the model would speak.
        deadline = time.monotonic() + 3
        while (status := client.get(listing).status_code) == 429 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert status == 200


def test_an_end_user_token_is_capped_per_end_user(
    owner: Tenant, settings: Settings, scripted: ScriptedBackend
) -> None:
    """A browser's requests count per end user: one user at the cap does not
    hold the workspace's other users (they share no key)."""
    settings.MAX_CONCURRENT_REQUESTS_PER_KEY = 1
    scripted.default = answer(("An answer.", None))
    alice, bob = (
        token_client(tokens.end_user_token_mint(workspace=owner.workspace, external_user_id=user).token)
        for user in ("alice", "bob")
    )
    url = f"/api/v1/workspaces/{owner.workspace.id}/"
    held = alice.post(f"{url}chat/stream/", {"message": "Tell me"}, format="json")
    assert held.status_code == 200
    assert alice.get(f"{url}sessions/").status_code == 429
    assert bob.get(f"{url}sessions/").status_code == 200
    held.close()
    assert alice.get(f"{url}sessions/").status_code == 200
