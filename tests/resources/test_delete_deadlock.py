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
from django.db import IntegrityError, OperationalError, connection, connections, transaction

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


def passage(resource: Resource, word: str, ordinal: int = 0) -> Passage:
    return Passage.objects.create(
        workspace_id=resource.workspace_id,
        resource=resource,
        ordinal=ordinal,
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


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("route", ["sync/delete", "resource", "workspace"])
def test_an_ingestion_cannot_commit_passages_of_a_document_being_deleted(owner: Tenant, route: str) -> None:
    """The document being deleted is the one an ingestion is writing. Its new
    passage is inserted but not committed (the foreign key is checked at
    commit: Django's constraints are deferred), so the deletion's DELETE of
    passages does not see it. Had the ingestion committed before the
    deletion did, the deletion's own check at commit would find a passage of
    a deleted document: a 500. The deletion takes the documents' rows first,
    so the ingestion's commit waits for it, and then fails (the document is
    gone; ingestion gives up on a deleted document). Deleting the workspace
    locks the workspace's row, which the passage's other key needs."""
    ingested = document(owner, "one", "alpha")
    inserted = threading.Event()
    commit = threading.Event()
    outcome: dict[str, Any] = {}

    def ingestion() -> None:
        try:
            with transaction.atomic():
                passage(ingested, "beta", ordinal=1)
                inserted.set()
                commit.wait(30)
            outcome["ingestion"] = "committed"
        except Exception as exc:  # reported to the test below
            outcome["ingestion"] = exc
        finally:
            connections.close_all()

    def at_the_documents_delete(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if sql.startswith(('DELETE FROM "resources_resource"', 'DELETE FROM "workspaces_workspace"')) and (
            not commit.is_set()
        ):
            # The deletion's passages are gone, its document not yet: the
            # ingestion tries to commit now, and either does or waits.
            commit.set()
            deadline = time.monotonic() + 30
            while "ingestion" not in outcome and not waiting_on_a_lock():
                assert time.monotonic() < deadline
                time.sleep(0.02)
        return execute(sql, params, many, context)

    writer = threading.Thread(target=ingestion)
    writer.start()
    assert inserted.wait(30)
    base = f"/api/v1/workspaces/{owner.workspace.id}"
    client = owner.client("admin")
    with connection.execute_wrapper(at_the_documents_delete):
        if route == "resource":
            response = client.delete(f"{base}/resources/{ingested.id}/")
        elif route == "workspace":
            response = client.delete(f"{base}/")
        else:
            response = client.post(f"{base}/sync/delete/", {"external_ids": ["one"]}, format="json")
    writer.join(60)

    assert response.status_code in (200, 204), response.content
    # The document gone; or, deleting the whole workspace, its commit was the
    # loser of a deadlock (ingestion runs again, and finds nothing to write).
    assert isinstance(outcome["ingestion"], IntegrityError | OperationalError), outcome
    assert not Resource.objects.filter(pk=ingested.pk).exists()
    assert not Passage.objects.filter(resource_id=ingested.pk).exists()
    counts = dict(WorkspaceLexeme.objects.filter(workspace=owner.workspace).values_list("lexeme", "passages"))
    assert counts.get("alpha", 0) == 0 and counts.get("beta", 0) == 0
