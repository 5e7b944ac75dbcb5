"""A hybrid search is one statement (retrieval/search/hybrid.py)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from retrieval.search import dense, hybrid, search
from retrieval.search.plan import Legs
from tests.conftest import Tenant
from tests.retrieval.conftest import make_resource, vectors_near
from tests.retrieval.corpus import KNITTING

# The fusion's arithmetic below (which leg's candidates win) is MiniLM's: its
# dense weight, 0.5 (retrieval/search/service.py); the statements are the
# same on either model.
pytestmark = [pytest.mark.django_db, pytest.mark.slow, pytest.mark.usefixtures("minilm")]

QUERY = "Where was the zeppelin hangar built?"
HYBRID = Legs(dense=True, lexical=True)
DENSE = Legs(dense=True, lexical=False)


def _statements(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]


def _workspace(owner: Tenant) -> tuple[set[str], set[str]]:
    """60 passages nearest the query without its words, and 5 farther ones
    holding them: the dense leg's 50 candidates are all of the first kind,
    the lexical leg's are the second."""
    near = [f"airship shed number {i}" for i in range(60)]
    worded = [
        f"The zeppelin hangar {i} was built in a field: a zeppelin hangar built of steel." for i in range(5)
    ]
    make_resource(owner.workspace, "Near", near, vectors=vectors_near(QUERY, 60, noise=0.1, seed=1))
    make_resource(owner.workspace, "Worded", worded, vectors=vectors_near(QUERY, 5, noise=0.15, seed=2))
    dense_top = {r.text for r in search(workspace=owner.workspace, query=QUERY, top_k=50, legs=DENSE)}
    assert dense_top <= set(near)
    return dense_top, set(worded)


@pytest.mark.parametrize("path", ["passages-checked", "gin-index", "hnsw", "hnsw-large-share"])
def test_a_hybrid_search_is_one_statement(owner: Tenant, monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    if path != "passages-checked":  # the lexical match of a workspace past hybrid.SCAN_MAX_PASSAGES
        monkeypatch.setattr(hybrid, "SCAN_MAX_PASSAGES", 0)
    if path.startswith("hnsw"):  # past the exact search's size: the HNSW settings go first
        monkeypatch.setattr(dense, "EXACT_MAX_PASSAGES", 0)
    # A workspace that is a large share of the table (all of it here, unless
    # the share needed is more than all).
    monkeypatch.setattr(hybrid, "LARGE_SHARE", 0.0 if path == "hnsw-large-share" else 2.0)
    dense_top, worded = _workspace(owner)
    search(workspace=owner.workspace, query=QUERY)  # workspace statistics cached, query embedded
    with CaptureQueriesContext(connection) as queries:
        results = search(workspace=owner.workspace, query=QUERY)
    statements = _statements(queries)
    expected = 2 if path.startswith("hnsw") else 1
    assert len(statements) == expected, "\n".join(sql[:120] for sql in statements)
    large_share = "p.workspace_id::text" in statements[-1]
    assert large_share == (path == "hnsw-large-share")
    # The lexical leg's candidates, outside the dense leg's, win on their words.
    assert {r.text for r in results} == worded
    assert not worded & dense_top
    # Each holds every word of the query twice: the same BM25, well up its ceiling.
    assert all(r.lexical_score == pytest.approx(results[0].lexical_score) for r in results)
    assert 0.6 < (results[0].lexical_score or 0.0) < 1.0


def test_a_hybrid_search_naming_resources_is_one_statement(owner: Tenant) -> None:
    _workspace(owner)
    knitting = make_resource(owner.workspace, "Knitting", KNITTING)
    search(workspace=owner.workspace, query=QUERY)
    with CaptureQueriesContext(connection) as queries:
        results = search(workspace=owner.workspace, query=QUERY, resource_ids=[knitting.id])
    # The named ids are checked first, on the primary (replica.py), then the one search.
    statements = _statements(queries)
    assert len(statements) == 2, "\n".join(sql[:120] for sql in statements)
    assert statements[0].startswith('SELECT "resources_resource"."id"')
    picked = [r for r in results if r.resource_id == knitting.id]
    assert len(picked) == owner.workspace.per_resource_k
    assert all(r.lexical_score == 0.0 for r in picked)  # no word of the query in them
