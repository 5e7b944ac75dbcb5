"""SERVER_TIMING: a search request reports its embedding and database time,
a chat turn each of its phases."""

from __future__ import annotations

import re

import pytest
from django.test import override_settings

from chat.backends.scripted import ScriptedBackend
from tests.conftest import Tenant
from tests.retrieval.conftest import make_resource
from tests.retrieval.corpus import SOLAR

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def _search(owner: Tenant) -> dict[str, float] | None:
    make_resource(owner.workspace, "Solar", SOLAR[:6])
    response = owner.client("chat").post(
        f"/api/v1/workspaces/{owner.workspace.id}/search/", {"query": "solar power"}, format="json"
    )
    assert response.status_code == 200
    header = response.headers.get("Server-Timing")
    if header is None:
        return None
    return {name: float(ms) for name, ms in re.findall(r"(\w+);dur=([0-9.]+)", header)}


@override_settings(SERVER_TIMING=True)
def test_search_reports_embedding_and_database_time(owner: Tenant) -> None:
    phases = _search(owner)
    assert phases is not None and set(phases) == {"auth", "embed", "search", "app"}
    assert 0 < phases["auth"] < phases["app"]
    assert 0 < phases["embed"] < phases["app"]
    assert 0 < phases["search"] < phases["app"]
    assert phases["auth"] + phases["embed"] + phases["search"] <= phases["app"]


def test_no_header_unless_switched_on(owner: Tenant) -> None:
    assert _search(owner) is None


@override_settings(SERVER_TIMING=True)
def test_errors_carry_the_header_too(owner: Tenant) -> None:
    response = owner.client("chat").post(
        f"/api/v1/workspaces/{owner.workspace.id}/search/", {"query": ""}, format="json"
    )
    assert response.status_code == 400
    assert re.fullmatch(r"auth;dur=[0-9.]+, app;dur=[0-9.]+", response.headers["Server-Timing"])


@override_settings(SERVER_TIMING=True)
def test_a_chat_turn_reports_its_phases(owner: Tenant, scripted: ScriptedBackend) -> None:
    """What bench/chat_overhead.py splits a turn by (a generative stand-in answers)."""
    make_resource(owner.workspace, "Solar", SOLAR[:6])
    response = owner.client("chat").post(
        f"/api/v1/workspaces/{owner.workspace.id}/chat/",
        {"external_user_id": "u-1", "message": "How do solar panels make power?"},
        format="json",
    )
    assert response.status_code == 200
    phases = {name: float(ms) for name, ms in re.findall(r"(\w+);dur=([0-9.]+)", response["Server-Timing"])}
    turn = ["auth", "plan", "store", "embed", "search", "decide", "compose", "generate", "reply"]
    assert list(phases) == [*turn, "app"]
    assert sum(phases[name] for name in turn) <= phases["app"]
