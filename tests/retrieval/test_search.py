"""The search service against real PostgreSQL + pgvector and the real model."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import numpy as np
import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test import override_settings
from psycopg import sql

from daneshyar.exceptions import ValidationFailed
from resources.models import ResourceStatus
from retrieval.embeddings import get_embedder
from retrieval.search import ScoredPassage, dense, search, statements
from retrieval.search.plan import Legs
from tests.conftest import Tenant
from tests.factories import WorkspaceFactory
from tests.retrieval.conftest import make_resource, vectors_near
from tests.retrieval.corpus import COOKING, KNITTING, SOLAR

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

QUERY = "How do solar panels generate electricity?"
DENSE = Legs(dense=True, lexical=False)
LEXICAL = Legs(dense=False, lexical=True)
HYBRID = Legs(dense=True, lexical=True)
ALL_LEGS = [DENSE, LEXICAL, HYBRID]


def _assert_ordered(results: list[ScoredPassage]) -> None:
    assert [r.rank for r in results] == list(range(1, len(results) + 1))
    scores = [r.score for r in results]
    assert scores == sorted(scores, reverse=True)
    assert len({r.passage_id for r in results}) == len(results)


def _solar_workspace(owner: Tenant) -> None:
    for i in range(4):
        make_resource(owner.workspace, f"Solar {i}", SOLAR[i * 5 : i * 5 + 5])
    make_resource(owner.workspace, "Cooking", COOKING)


@pytest.mark.parametrize("legs", ALL_LEGS, ids=["dense", "lexical", "hybrid"])
def test_default_is_the_workspace_top_k(owner: Tenant, legs: Legs) -> None:
    _solar_workspace(owner)
    results = search(workspace=owner.workspace, query=QUERY, legs=legs)
    assert len(results) == owner.workspace.top_k == 5
    _assert_ordered(results)
    assert all(r.resource_title.startswith("Solar") for r in results)
    assert all(r.text in SOLAR for r in results)


def test_top_k_overrides_the_workspace_setting(owner: Tenant) -> None:
    _solar_workspace(owner)
    assert len(search(workspace=owner.workspace, query=QUERY, top_k=12)) == 12


def _cosine(query: str, passage: str) -> float:
    """The cosine of ``query`` embedded as a question and ``passage`` as a
    passage (1.0 for the same text on MiniLM, which embeds both alike; e5
    prefixes each side, so less)."""
    embedder = get_embedder()
    return float(np.dot(embedder.embed_queries([query])[0], embedder.embed_passages([passage])[0]))


def test_dense_score_is_the_cosine_similarity(owner: Tenant) -> None:
    make_resource(owner.workspace, "Solar", SOLAR[:3])
    results = search(workspace=owner.workspace, query=SOLAR[0], legs=DENSE)
    assert results[0].text == SOLAR[0]
    assert results[0].score == pytest.approx(_cosine(SOLAR[0], SOLAR[0]), abs=1e-4)
    assert all(-1.0 <= r.score <= 1.0 for r in results)


def test_hybrid_and_lexical_scores_are_within_unit_range(owner: Tenant) -> None:
    _solar_workspace(owner)
    for legs in (LEXICAL, HYBRID):
        results = search(workspace=owner.workspace, query=QUERY, legs=legs)
        assert all(0.0 <= r.score <= 1.0 for r in results)
    # BM25 over what the query could score at most: even the best passage is below 1.
    assert 0.0 < search(workspace=owner.workspace, query=QUERY, legs=LEXICAL)[0].score < 1.0


@pytest.mark.parametrize("legs", ALL_LEGS, ids=["dense", "lexical", "hybrid"])
def test_named_resource_contributes_its_best_passages_even_when_far(owner: Tenant, legs: Legs) -> None:
    _solar_workspace(owner)
    knitting = make_resource(owner.workspace, "Knitting", KNITTING)
    closest = search(workspace=owner.workspace, query=QUERY, top_k=15, legs=legs)
    assert not any(r.resource_id == knitting.id for r in closest)

    results = search(workspace=owner.workspace, query=QUERY, resource_ids=[knitting.id], legs=legs)
    planted = [r for r in results if r.resource_id == knitting.id]
    assert len(planted) == owner.workspace.per_resource_k == 3
    assert len(results) == owner.workspace.widened_top_k + 3
    assert {r.passage_id for r in closest} <= {r.passage_id for r in results}
    _assert_ordered(results)


def test_named_resource_already_among_the_closest_is_not_repeated(owner: Tenant) -> None:
    _solar_workspace(owner)
    solar = make_resource(
        owner.workspace, "Solar extra", ["Solar panels generate electricity from sunlight."]
    )
    results = search(workspace=owner.workspace, query=QUERY, resource_ids=[solar.id, solar.id])
    assert len(results) == 15
    assert sum(r.resource_id == solar.id for r in results) == 1


def test_unknown_and_foreign_resource_ids_are_validation_errors(owner: Tenant, outsider: Tenant) -> None:
    _solar_workspace(owner)
    foreign = make_resource(outsider.workspace, "Theirs", KNITTING[:1])
    sibling = make_resource(
        WorkspaceFactory.create(organization=owner.organization), "Other workspace", KNITTING[:1]
    )
    for resource_id in (uuid.uuid4(), foreign.id, sibling.id):
        with pytest.raises(ValidationFailed) as caught:
            search(workspace=owner.workspace, query=QUERY, resource_ids=[resource_id])
        assert caught.value.fields is not None and "resource_ids" in caught.value.fields


@pytest.mark.parametrize("legs", ALL_LEGS, ids=["dense", "lexical", "hybrid"])
def test_passages_of_unready_and_deleted_resources_never_appear(owner: Tenant, legs: Legs) -> None:
    make_resource(owner.workspace, "Cooking", COOKING)
    hidden = [
        make_resource(owner.workspace, f"Solar {status}", SOLAR[i * 4 : i * 4 + 4], status=status)
        for i, status in enumerate([ResourceStatus.PENDING, ResourceStatus.PROCESSING, ResourceStatus.FAILED])
    ]
    deleted = make_resource(owner.workspace, "Solar deleted", SOLAR[12:16])
    deleted.delete()
    named = [r.id for r in hidden]  # named, valid, but not ready: they add nothing
    query = "solar panels and tomato sauce"  # every leg finds the ready cooking resource
    for resource_ids in ([], named):
        results = search(
            workspace=owner.workspace, query=query, resource_ids=resource_ids, legs=legs, top_k=50
        )
        assert results, "the ready cooking resource is still searchable"
        assert all(r.resource_title == "Cooking" for r in results)


def test_empty_workspace_returns_nothing(owner: Tenant) -> None:
    for legs in ALL_LEGS:
        assert search(workspace=owner.workspace, query=QUERY, legs=legs) == []


def test_exact_identifier_is_found_by_the_lexical_leg(owner: Tenant) -> None:
    _solar_workspace(owner)
    make_resource(owner.workspace, "Manual", ["Error ZX-4471 means the inverter's fan has stopped."])
    results = search(workspace=owner.workspace, query="ZX-4471", legs=HYBRID)
    assert results[0].resource_title == "Manual"


@pytest.mark.parametrize("query", ["it's a 'quoted' \\ back:slash & | ! <-> (x)", "!!!", "the and of"])
def test_queries_with_tsquery_syntax_or_only_stop_words_work(owner: Tenant, query: str) -> None:
    _solar_workspace(owner)
    assert len(search(workspace=owner.workspace, query=query, legs=HYBRID)) == 5


@override_settings(RETRIEVAL_LEXICAL=False)
def test_settings_switch_the_legs(owner: Tenant) -> None:
    make_resource(owner.workspace, "Solar", SOLAR[:3])
    found = search(workspace=owner.workspace, query=SOLAR[0])[0]
    assert found.score == pytest.approx(_cosine(SOLAR[0], SOLAR[0]), abs=1e-4)  # the dense leg's alone


def _plain_filtered_hnsw(workspace_id: uuid.UUID, query: str, k: int) -> int:
    """Rows a plain filtered HNSW scan returns (pgvector defaults: ef_search 40, no iterative scan)."""
    vector = dense.vector_literal(get_embedder().embed_queries([query])[0])
    with transaction.atomic(), connection.cursor() as cursor:
        # Make the planner take the HNSW index even on this small table.
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("SET LOCAL hnsw.iterative_scan = off")
        cursor.execute("SET LOCAL hnsw.ef_search = 40")
        cursor.execute(
            sql.SQL("EXPLAIN ") + statements.nearest(exact=False), _params(workspace_id, vector, k)
        )
        assert "passage_embedding_hnsw" in " ".join(row[0] for row in cursor.fetchall())
        cursor.execute(statements.nearest(exact=False), _params(workspace_id, vector, k))
        return len(cursor.fetchall())


def _params(workspace_id: uuid.UUID, vector: str, k: int) -> dict[str, str | uuid.UUID | int]:
    return {"vector": vector, "workspace": workspace_id, "model": settings.EMBEDDING_MODEL_NAME, "limit": k}


@pytest.mark.parametrize("exact", [True, False], ids=["exact", "iterative-hnsw"])
def test_small_workspace_beside_a_large_one_gets_its_full_k(
    owner: Tenant, tenant_factory: Callable[[str], Tenant], monkeypatch: pytest.MonkeyPatch, exact: bool
) -> None:
    # A large workspace of another tenant whose 600 passages all lie closer
    # to the query than any of the small workspace's.
    large = tenant_factory("Large").workspace
    make_resource(
        large, "Large", [f"passage {i}" for i in range(600)], vectors=vectors_near(QUERY, 600, noise=0.02)
    )
    make_resource(owner.workspace, "Cooking", COOKING)
    make_resource(owner.workspace, "Knitting", KNITTING)
    assert _plain_filtered_hnsw(owner.workspace.id, QUERY, 5) < 5  # the pitfall, demonstrated

    if not exact:
        # Take the service's HNSW path too, on the same small workspace.
        monkeypatch.setattr(dense, "EXACT_MAX_PASSAGES", 0)
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_sort = off")
    for legs in ALL_LEGS[::2]:  # dense and hybrid (lexical has no index to under-fill)
        results = search(workspace=owner.workspace, query=QUERY, legs=legs)
        assert len(results) == 5
        assert all(r.resource_title in {"Cooking", "Knitting"} for r in results)


def test_each_result_carries_the_scores_of_the_legs_behind_it(owner: Tenant) -> None:
    from retrieval.search.fusion import dense_weight

    _solar_workspace(owner)
    hybrid = search(workspace=owner.workspace, query=QUERY, legs=HYBRID)
    dense_only = {
        r.passage_id: r.score for r in search(workspace=owner.workspace, query=QUERY, top_k=50, legs=DENSE)
    }
    for result in hybrid:
        assert result.dense_score is not None and result.lexical_score is not None
        assert result.score == pytest.approx(
            dense_weight() * result.dense_score + (1 - dense_weight()) * result.lexical_score
        )
        # The dense leg's score is the cosine similarity, as the dense search reports it.
        assert result.dense_score == pytest.approx(dense_only[result.passage_id], abs=1e-6)
        assert 0.0 <= result.lexical_score <= 1.0
    assert max(r.lexical_score or 0.0 for r in hybrid) > 0.0

    for result in search(workspace=owner.workspace, query=QUERY, legs=DENSE):
        assert result.dense_score == pytest.approx(result.score) and result.lexical_score is None
    for result in search(workspace=owner.workspace, query=QUERY, legs=LEXICAL):
        assert result.dense_score is None and result.lexical_score == pytest.approx(result.score)


def test_the_dense_weight_is_the_embedding_models() -> None:
    from retrieval.search.fusion import DENSE_WEIGHT, DENSE_WEIGHTS, dense_weight

    assert dense_weight("all-MiniLM-L6-v2") == DENSE_WEIGHTS["all-MiniLM-L6-v2"]
    assert dense_weight("multilingual-e5-small") == DENSE_WEIGHTS["multilingual-e5-small"]
    assert dense_weight("a-model-never-measured") == DENSE_WEIGHT
    assert all(0.0 < weight < 1.0 for weight in [*DENSE_WEIGHTS.values(), DENSE_WEIGHT])
