"""A deletion that crosses an ingestion's passage writes is run again, not
answered 500 (daneshyar/transactions.py).

Passage writes keep the workspace's lexeme counts by statement-level
triggers, each statement's rows in one order; ingestion replaces a
document's passages with a DELETE and then INSERTs in one transaction. Here,
on the real database, an ingestion (in a thread) has deleted a passage
holding "beta" and waits; ``POST …/sync/delete/`` (in another thread)
deletes two documents, one with "alpha" and one with "beta": it takes
"alpha"'s count and waits for "beta"'s. The ingestion then inserts a passage
with "alpha": each waits for the other, and PostgreSQL aborts the deletion
(it waited first). Run again once the ingestion committed, it deletes both.
"""

from __future__ import annotations

import hashlib
import threading
import time
from typing import Any

import pytest
from django.db import connection, connections, transaction

from resources.models import Resource, ResourceStatus
from retrieval.models import Passage, WorkspaceLexeme
from tests.conftest import Tenant

VECTOR = [0.1] * 384


def document(tenant: Tenant, external_id: str, word: str) -> Resource:
    resource = Resource.objects.create(
        workspace=tenant.workspace,
        title=external_id,
        filename=f"{external_id}.txt",
        content_type="text/plain",
        size_bytes=len(word),
        sha256=hashlib.sha256(external_id.encode()).hexdigest(),
        status=ResourceStatus.READY,
        external_id=external_id,
        passage_count=1,
    )
    passage(resource, word)
    return resource


def passage(resource: Resource, word: str) -> Passage:
    return Passage.objects.create(
        workspace_id=resource.workspace_id,
        resource=resource,
        ordinal=0,
        text=word,
        char_start=0,
        char_end=len(word),
        token_count=1,
        embedding=VECTOR,
        embedding_model="test",
        language="en",
        lexical_text=word,
    )


def waiting_on_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        )
        return bool(cursor.fetchone()[0])


@pytest.mark.django_db(transaction=True)
def test_a_deletion_crossing_an_ingestion_is_run_again(owner: Tenant) -> None:
    document(owner, "one", "alpha")
    document(owner, "two", "beta")
    ingested = document(owner, "three", "beta")
    deleted_once = threading.Event()
    go_on = threading.Event()
    outcome: dict[str, Any] = {}

    def ingestion() -> None:
        try:
            with transaction.atomic():
                # The deletion finds the cycle first, so it is the one aborted
                # (either side may be; ingestion has retries of its own).
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL deadlock_timeout = '20s'")
                Passage.objects.filter(resource=ingested).delete()  # holds "beta"'s count
                deleted_once.set()
                go_on.wait(30)
                passage(ingested, "alpha")  # needs "alpha"'s, which the deletion holds
            outcome["ingestion"] = "committed"
        except Exception as exc:  # reported to the test below
            outcome["ingestion"] = exc
        finally:
            connections.close_all()

    def deletion() -> None:
        try:
            response = owner.client("admin").post(
                f"/api/v1/workspaces/{owner.workspace.id}/sync/delete/",
                {"external_ids": ["one", "two"]},
                format="json",
            )
            outcome["deletion"] = response
        finally:
            connections.close_all()

    writer = threading.Thread(target=ingestion)
    writer.start()
    assert deleted_once.wait(30)
    deleter = threading.Thread(target=deletion)
    deleter.start()
    deadline = time.monotonic() + 30
    while not waiting_on_a_lock():  # the deletion waits for "beta"'s count
        assert time.monotonic() < deadline
        time.sleep(0.02)
    go_on.set()
    writer.join(60)
    deleter.join(60)

    assert outcome["ingestion"] == "committed"
    response = outcome["deletion"]
    assert response.status_code == 200, response.content
    assert {row["external_id"] for row in response.json()["data"]["deleted"]} == {"one", "two"}
    assert set(Resource.objects.values_list("external_id", flat=True)) == {"three"}
    counts = dict(WorkspaceLexeme.objects.filter(workspace=owner.workspace).values_list("lexeme", "passages"))
    assert counts.get("alpha") == 1 and counts.get("beta", 0) == 0
