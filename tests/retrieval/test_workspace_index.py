"""A large workspace's own HNSW index (retrieval/workspace_index.py): built by
the periodic task, chosen by the planner for that workspace's searches only,
dropped with the workspace, rebuilt after an interrupted build."""

from __future__ import annotations

import uuid

import psycopg
import pytest
from django.conf import settings
from django.db import connection, transaction
from psycopg import sql

from resources.models import ResourceStatus
from retrieval import workspace_index
from retrieval.embeddings import get_embedder
from retrieval.search import dense, search, statements
from retrieval.tasks import workspace_indexes_sweep
from tests.factories import WorkspaceFactory
from tests.retrieval.conftest import make_resource, vectors_near
from workspaces.models import Workspace

QUERY = "How do solar panels turn sunlight into electricity?"
LIMIT = 40  # the test's stand-in for OWN_INDEX_MIN_PASSAGES

pytestmark = pytest.mark.django_db(transaction=True)  # CREATE INDEX CONCURRENTLY runs outside transactions


@pytest.fixture(autouse=True)
def _small_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workspace_index, "OWN_INDEX_MIN_PASSAGES", LIMIT)
    monkeypatch.setattr(dense, "EXACT_MAX_PASSAGES", LIMIT)


def _workspace(passages: int, *, seed: int, status: str = ResourceStatus.READY) -> Workspace:
    workspace = WorkspaceFactory.create()
    texts = [f"passage {i} of {workspace.name}" for i in range(passages)]
    make_resource(
        workspace, "Doc", texts, vectors=vectors_near(QUERY, passages, noise=0.02, seed=seed), status=status
    )
    return workspace


def _plan(workspace_id: uuid.UUID) -> str:
    """The dense leg's index-path plan for the workspace (sorting off: the table is tiny)."""
    vector = dense.vector_literal(get_embedder().embed_queries([QUERY])[0])
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute(
            sql.SQL("EXPLAIN ") + statements.nearest(exact=False),
            {"vector": vector, "workspace": workspace_id, "model": settings.EMBEDDING_MODEL_NAME, "limit": 5},
        )
        return " ".join(row[0] for row in cursor.fetchall())


def test_the_sweep_gives_each_large_workspace_its_own_index_and_search_uses_it() -> None:
    large = _workspace(LIMIT + 30, seed=1)
    other_large = _workspace(LIMIT + 10, seed=2)
    small = _workspace(10, seed=3)
    not_ready = _workspace(LIMIT + 10, seed=4, status=ResourceStatus.PROCESSING)

    done = workspace_indexes_sweep()

    assert sorted(done["built"]) == sorted([str(large.id), str(other_large.id)])
    assert workspace_index.own_indexes() == {large.id: True, other_large.id: True}
    assert workspace_index.index_name(large.id) in _plan(large.id)
    assert workspace_index.index_name(other_large.id) in _plan(other_large.id)
    # A workspace without an index of its own stays on the shared one.
    assert "passage_embedding_hnsw" in _plan(small.id)
    assert "passage_embedding_hnsw" in _plan(not_ready.id)
    results = search(workspace=large, query=QUERY, top_k=10)
    assert len(results) == 10
    assert {r.text.rsplit(" of ", 1)[1] for r in results} == {large.name}
    # Run again: nothing to do.
    assert workspace_indexes_sweep() == {"built": [], "dropped": []}


def test_the_index_goes_with_its_workspace() -> None:
    large = _workspace(LIMIT + 10, seed=5)
    workspace_indexes_sweep()
    workspace_id = large.id
    assert workspace_index.has_own_index(workspace_id)
    large.delete()
    assert workspace_indexes_sweep() == {"built": [], "dropped": [str(workspace_id)]}
    assert workspace_index.own_indexes() == {}


def test_an_index_left_invalid_by_an_interrupted_build_is_built_again() -> None:
    large = _workspace(LIMIT + 10, seed=6)
    workspace_indexes_sweep()
    with connection.cursor() as cursor:  # what a build killed half-way leaves behind
        cursor.execute(
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass",
            [workspace_index.index_name(large.id)],
        )
    assert workspace_index.own_indexes() == {large.id: False}
    assert workspace_indexes_sweep()["built"] == [str(large.id)]
    assert workspace_index.own_indexes() == {large.id: True}


def test_one_build_at_a_time() -> None:
    large = _workspace(LIMIT + 10, seed=7)
    params = connection.get_connection_params()
    with psycopg.connect(**params, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s)", [workspace_index._BUILD_LOCK])
        assert workspace_index.build(large.id) is False
        other.execute("SELECT pg_advisory_unlock(%s)", [workspace_index._BUILD_LOCK])
    assert workspace_index.build(large.id) is True
    assert workspace_index.has_own_index(large.id)
