"""Search rules at their edges, and the embedding model's readiness, against
the real model and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_django.fixtures import Settings

from retrieval.embeddings import default_model_path, embedding_readiness, get_embedder
from retrieval.search import search
from retrieval.search.plan import Legs, named_resources_validate
from tests.conftest import Tenant, api_client
from tests.retrieval.conftest import make_resource
from tests.retrieval.corpus import COOKING, KNITTING, SOLAR

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

LEXICAL = Legs(dense=False, lexical=True)
HYBRID = Legs(dense=True, lexical=True)


def test_a_search_with_no_leg_is_a_programming_error(owner: Tenant) -> None:
    with pytest.raises(ValueError, match="at least one retrieval leg"):
        search(workspace=owner.workspace, query="x", legs=Legs(dense=False, lexical=False))


def test_lexical_only_represents_a_named_resource_without_shared_words_by_its_first_passages(
    owner: Tenant,
) -> None:
    make_resource(owner.workspace, "Solar", SOLAR[:10])
    knitting = make_resource(owner.workspace, "Knitting", KNITTING)
    results = search(
        workspace=owner.workspace, query="solar panels", resource_ids=[knitting.id], legs=LEXICAL
    )
    planted = [r for r in results if r.resource_id == knitting.id]
    assert sorted(r.text for r in planted) == sorted(KNITTING[:3])  # its first three
    assert all(r.score == 0.0 and r.lexical_score == 0.0 for r in planted)
    # They rank after every passage that shares a word with the query.
    assert results[-3:] == planted
    assert all(r.score > 0 for r in results[:-3])


def test_top_k_also_overrides_the_widened_k_of_a_named_search(owner: Tenant) -> None:
    make_resource(owner.workspace, "Solar", SOLAR)
    cooking = make_resource(owner.workspace, "Cooking", COOKING)
    results = search(
        workspace=owner.workspace, query="solar electricity", resource_ids=[cooking.id], top_k=4, legs=HYBRID
    )
    assert len([r for r in results if r.resource_id != cooking.id]) == 4
    assert len([r for r in results if r.resource_id == cooking.id]) == 3


def test_workspace_settings_shape_the_result(owner: Tenant) -> None:
    owner.workspace.top_k = 2
    owner.workspace.widened_top_k = 3
    owner.workspace.per_resource_k = 1
    owner.workspace.save()
    make_resource(owner.workspace, "Solar", SOLAR)
    knitting = make_resource(owner.workspace, "Knitting", KNITTING)
    assert len(search(workspace=owner.workspace, query="solar")) == 2
    named = search(workspace=owner.workspace, query="solar", resource_ids=[knitting.id])
    assert len(named) == 4
    assert sum(r.resource_id == knitting.id for r in named) == 1


def test_named_resources_are_deduplicated_in_order(owner: Tenant) -> None:
    first = make_resource(owner.workspace, "A", KNITTING[:1])
    second = make_resource(owner.workspace, "B", COOKING[:1])
    named = named_resources_validate(workspace=owner.workspace, resource_ids=[second.id, first.id, second.id])
    assert named == [second.id, first.id]
    assert named_resources_validate(workspace=owner.workspace, resource_ids=[]) == []


def test_equal_scores_come_in_a_stable_order(owner: Tenant) -> None:
    # Identical passages in two resources: scores tie, the order must not flicker.
    make_resource(owner.workspace, "One", ["Solar panels make electricity."] * 3)
    make_resource(owner.workspace, "Two", ["Solar panels make electricity."] * 3)
    runs = [
        [r.passage_id for r in search(workspace=owner.workspace, query="solar electricity", top_k=6)]
        for _ in range(3)
    ]
    assert runs[0] == runs[1] == runs[2]
    assert runs[0] == sorted(runs[0], key=str)


def test_the_outsiders_passages_never_appear_in_a_search(owner: Tenant, outsider: Tenant) -> None:
    make_resource(owner.workspace, "Cooking", COOKING)
    make_resource(outsider.workspace, "Their solar", SOLAR)
    for legs in (LEXICAL, HYBRID, Legs(dense=True, lexical=False)):
        results = search(workspace=owner.workspace, query="solar panels electricity", top_k=50, legs=legs)
        assert {r.resource_title for r in results} <= {"Cooking"}


# The embedding model's readiness


def test_the_packaged_model_is_ready() -> None:
    path = default_model_path()
    assert (path / "config.json").exists() or (path / "modules.json").exists()
    embedding_readiness()


def test_a_missing_model_directory_makes_the_torch_backend_unready(
    settings: Settings, tmp_path: Path
) -> None:
    settings.EMBEDDING_BACKEND = "torch"
    settings.EMBEDDING_MODEL = str(tmp_path / "nowhere")
    assert default_model_path() == tmp_path / "nowhere"
    with pytest.raises(RuntimeError, match="no embedding model at"):
        embedding_readiness()


def test_readiness_reports_a_missing_model_as_503(settings: Settings, tmp_path: Path) -> None:
    settings.EMBEDDING_BACKEND = "torch"
    settings.EMBEDDING_MODEL = str(tmp_path)
    response = api_client(None).get("/readyz")
    assert response.status_code == 503
    assert response.json()["error"]["checks"]["embedding_model"] == "error: RuntimeError"


def test_a_model_of_another_dimension_is_refused_at_load(settings: Settings) -> None:
    # A fresh configuration (another batch size) loads the model again and
    # checks its dimension against the schema's.
    settings.EMBEDDING_BACKEND = "torch"
    settings.EMBEDDING_BATCH_SIZE = 3
    settings.EMBEDDING_DIMENSIONS = 512
    with pytest.raises(RuntimeError, match="makes 384-dimensional vectors but EMBEDDING_DIMENSIONS is 512"):
        get_embedder()


def test_the_embedder_is_loaded_once_per_configuration() -> None:
    assert get_embedder() is get_embedder()
    vector = get_embedder().embed_queries(["solar panels"])[0]
    assert len(vector) == 384
    assert sum(x * x for x in vector) == pytest.approx(1.0, abs=1e-4)
    assert get_embedder().embed_passages([]) == []
