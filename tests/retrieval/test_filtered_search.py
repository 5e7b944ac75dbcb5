"""A filter is a condition inside every leg's SQL, not a cut after its
``LIMIT``: a filter keeping 1 % of 300 documents still returns ``top_k``
passages, all of them matching, on every path (dense exact and through the
HNSW index, lexical, hybrid); a filter matching nothing returns nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from retrieval.embeddings import get_embedder
from retrieval.filter_grammar import filters_parse
from retrieval.filters import Access
from retrieval.search import dense, search, statements
from retrieval.search.plan import Legs
from tests.conftest import Tenant
from tests.retrieval.conftest import make_resource
from tests.retrieval.search_paths import DENSE, HYBRID, take_path
from tests.retrieval.search_paths import PATHS as SEARCH_PATHS

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

PATHS = {
    **SEARCH_PATHS,
    # A workspace too large for exact search whose readable documents are few:
    # searched exactly among them (service.narrowed).
    "dense-narrowed": (DENSE, 100, None, None),
    "hybrid-narrowed": (HYBRID, 100, 0, 2.0),
}
DOCUMENTS = 300
PASSAGES_PER_DOCUMENT = 3
TOP_K = 5
QUERY = "warranty claim for a broken kettle"


@pytest.fixture(autouse=True)
def _composed_again() -> Iterator[None]:
    yield
    statements.recompose()


@pytest.fixture
def library(owner: Tenant) -> dict[str, Any]:
    """300 documents of 3 passages, every passage sharing a word with the
    query; 3 of them (1 %) are ``{"line": "rare"}``. Vectors are random
    (the dense leg's order does not matter here, only what it may return)."""
    rng = np.random.default_rng(7)
    dimensions = get_embedder().dimensions
    rare = set()
    for i in range(DOCUMENTS):
        vectors = rng.normal(size=(PASSAGES_PER_DOCUMENT, dimensions))
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        texts = [f"Document {i} part {j}: the warranty covers kettle number {i * 3 + j}." for j in range(3)]
        resource = make_resource(owner.workspace, f"Doc {i}", texts, vectors=vectors.tolist())
        resource.metadata = {"line": "rare" if i % 100 == 7 else "common", "number": i}
        resource.save(update_fields=["metadata"])
        if i % 100 == 7:
            rare.add(resource.id)
    return {"rare": rare}


def _take_path(monkeypatch: pytest.MonkeyPatch, path: str) -> Legs:
    return take_path(monkeypatch, PATHS[path])


def _exactness_asked(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each dense search's ``exact`` from now on (exact distances, or the index), in order."""
    asked: list[bool] = []
    nearest = dense._nearest

    def spied(*, exact: bool, access: Any = None) -> str:
        asked.append(exact)
        return nearest(exact=exact, access=access)

    monkeypatch.setattr(dense, "_nearest", spied)
    return asked


@pytest.mark.parametrize("path", list(PATHS))
def test_a_filter_keeping_one_percent_still_returns_top_k(
    owner: Tenant, library: dict[str, Any], monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    legs = _take_path(monkeypatch, path)
    access = Access(filters=filters_parse({"type": "eq", "key": "line", "value": "rare"}))
    results = search(workspace=owner.workspace, query=QUERY, legs=legs, top_k=TOP_K, access=access)
    assert len(results) == TOP_K
    assert {r.resource_id for r in results} <= library["rare"]
    # The same search unfiltered: mostly other documents (the filter is not a no-op here).
    unfiltered = search(workspace=owner.workspace, query=QUERY, legs=legs, top_k=TOP_K)
    assert len(unfiltered) == TOP_K and not {r.resource_id for r in unfiltered} <= library["rare"]


def test_the_hnsw_scan_itself_finds_the_filtered_passages(
    owner: Tenant, library: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An iterative index scan goes on until ``top_k`` passages pass the
    filter: the exact search is not needed to fill the list."""
    monkeypatch.setattr(dense, "EXACT_MAX_PASSAGES", 0)
    asked = _exactness_asked(monkeypatch)
    access = Access(filters=filters_parse({"type": "in", "key": "number", "value": [7, 107, 207]}))
    results = search(workspace=owner.workspace, query=QUERY, legs=DENSE, top_k=TOP_K, access=access)
    assert len(results) == TOP_K and {r.resource_id for r in results} <= library["rare"]
    assert asked == [False]


def test_few_readable_documents_of_a_large_workspace_are_searched_exactly_among_them(
    owner: Tenant, library: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A filter keeping 1 % of a workspace too large for exact search: its
    documents are read first, and every distance among their passages is
    computed (no index scan), giving what exact search gives; an access
    that reads many documents stays on the index."""
    access = Access(filters=filters_parse({"type": "eq", "key": "line", "value": "rare"}))
    expected = search(workspace=owner.workspace, query=QUERY, legs=DENSE, top_k=9, access=access)
    monkeypatch.setattr(dense, "EXACT_MAX_PASSAGES", 100)  # the workspace's 900 passages are "large"
    asked = _exactness_asked(monkeypatch)
    found = search(workspace=owner.workspace, query=QUERY, legs=DENSE, top_k=9, access=access)
    assert asked == [True]
    assert [(r.passage_id, round(r.score, 6)) for r in found] == [
        (r.passage_id, round(r.score, 6)) for r in expected
    ]
    assert len(found) == 9 and {r.resource_id for r in found} == library["rare"]
    asked.clear()
    many = Access(filters=filters_parse({"type": "eq", "key": "line", "value": "common"}))
    assert len(search(workspace=owner.workspace, query=QUERY, legs=DENSE, top_k=TOP_K, access=many)) == TOP_K
    assert asked == [False]


@pytest.mark.parametrize("path", list(PATHS))
def test_a_filter_matching_nothing_returns_nothing(
    owner: Tenant, library: dict[str, Any], monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    legs = _take_path(monkeypatch, path)
    for sent in [
        {"type": "eq", "key": "line", "value": "none"},
        {"type": "eq", "key": "no_such_key", "value": "rare"},
        {"type": "ne", "key": "no_such_key", "value": "rare"},
    ]:
        access = Access(filters=filters_parse(sent))
        assert search(workspace=owner.workspace, query=QUERY, legs=legs, access=access) == []
    # Groups no document is open to, beside documents all restricted: nothing either.
    owner.workspace.resources.update(access={"groups": ["staff"]})
    assert search(workspace=owner.workspace, query=QUERY, legs=legs, access=Access(groups=("sales",))) == []
    assert search(workspace=owner.workspace, query=QUERY, legs=legs, access=Access(groups=("staff",)))


@pytest.mark.parametrize("path", ["dense-exact", "lexical", "hybrid-passages-checked"])
def test_named_resources_outside_the_filter_contribute_nothing(
    owner: Tenant, library: dict[str, Any], monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    """The per-resource picks (and the lexical leg's first passages) are filtered too."""
    legs = _take_path(monkeypatch, path)
    common = owner.workspace.resources.filter(metadata__line="common").values_list("id", flat=True)[:3]
    access = Access(filters=filters_parse({"type": "eq", "key": "line", "value": "rare"}))
    results = search(
        workspace=owner.workspace, query=QUERY, legs=legs, resource_ids=list(common), access=access
    )
    assert results and {r.resource_id for r in results} <= library["rare"]
