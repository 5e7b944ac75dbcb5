"""A resource's passages: the list endpoint, the selectors, and how
indexing writes them (real model, real PostgreSQL)."""

from __future__ import annotations

import io
import uuid
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.checks import Error
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connections, transaction
from django.test import Client
from pytest_django.fixtures import Settings

from daneshyar.exceptions import NotFound
from resources.chunking import Chunk
from resources.models import Resource, ResourceStatus
from retrieval import indexing
from retrieval.checks import embedding_dimensions_match_schema
from retrieval.embeddings import get_embedder
from retrieval.models import EMBEDDING_DIMENSIONS, Passage, PassageUnits
from retrieval.search import search
from retrieval.search.plan import Legs
from retrieval.selectors import passage_get, passage_list
from retrieval.unit_vectors import digest, unit_texts, unpack
from tests.conftest import Tenant, api_client
from tests.retrieval.conftest import make_resource
from tests.retrieval.corpus import COOKING, KNITTING, SOLAR

pytestmark = pytest.mark.django_db

VECTOR = [1.0] + [0.0] * (EMBEDDING_DIMENSIONS - 1)  # for tests that never search by meaning


def _url(tenant: Tenant, resource_id: object) -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/resources/{resource_id}/passages/"


# GET …/resources/{id}/passages/


@pytest.mark.parametrize("scope", ["chat", "admin"])
def test_the_passages_of_a_resource_in_order_without_vectors(owner: Tenant, scope: str) -> None:
    resource = make_resource(owner.workspace, "Knitting", KNITTING, vectors=[VECTOR] * len(KNITTING))
    make_resource(owner.workspace, "Cooking", COOKING, vectors=[VECTOR] * len(COOKING))
    response = owner.client(scope).get(_url(owner, resource.id))
    assert response.status_code == 200
    items = response.json()["data"]["items"]
    assert [item["text"] for item in items] == KNITTING
    assert [item["ordinal"] for item in items] == list(range(len(KNITTING)))
    assert set(items[0]) == {
        "id",
        "resource_id",
        "ordinal",
        "text",
        "char_start",
        "char_end",
        "page",
        "bbox",
        "token_count",
        "embedding_model",
    }
    assert {item["resource_id"] for item in items} == {str(resource.id)}
    assert items[0]["page"] is None and items[0]["bbox"] is None
    assert items[0]["embedding_model"] == get_embedder().model_name
    assert response.json()["data"]["next_cursor"] is None


def test_passages_page_by_ordinal(owner: Tenant) -> None:
    texts = [f"Passage number {i}." for i in range(7)]
    resource = make_resource(owner.workspace, "Numbers", texts, vectors=[VECTOR] * 7)
    client = owner.client("chat")
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        params: dict[str, Any] = {"limit": 3, **({"cursor": cursor} if cursor else {})}
        data = client.get(_url(owner, resource.id), params).json()["data"]
        seen += [item["text"] for item in data["items"]]
        pages += 1
        cursor = data["next_cursor"]
        if cursor is None:
            break
    assert seen == texts and pages == 3


def test_a_resource_without_passages_lists_nothing(owner: Tenant) -> None:
    resource = make_resource(owner.workspace, "Pending", [], status=ResourceStatus.PENDING, vectors=[])
    response = owner.client().get(_url(owner, resource.id))
    assert response.json()["data"] == {"items": [], "next_cursor": None}


def test_outsider_gets_404_for_the_passages(owner: Tenant, outsider: Tenant) -> None:
    resource = make_resource(owner.workspace, "Mine", KNITTING[:2], vectors=[VECTOR] * 2)
    for scope in ("chat", "admin"):
        # Their key on my workspace, and their workspace with my resource id.
        assert outsider.client(scope).get(_url(owner, resource.id)).status_code == 404
        assert outsider.client(scope).get(_url(outsider, resource.id)).status_code == 404


def test_a_resource_of_a_sibling_workspace_is_404(owner: Tenant) -> None:
    from workspaces import services

    sibling = services.workspace_create(organization=owner.organization, name="Sibling")
    theirs = make_resource(sibling, "Sibling doc", KNITTING[:1], vectors=[VECTOR])
    response = owner.client().get(_url(owner, theirs.id))
    assert response.status_code == 404
    assert response.json()["error"] == {"code": "not_found", "message": "Not found."}


def test_an_unknown_resource_is_404_and_no_key_is_401(owner: Tenant) -> None:
    assert owner.client().get(_url(owner, uuid.uuid4())).status_code == 404
    resource = make_resource(owner.workspace, "Mine", KNITTING[:1], vectors=[VECTOR])
    assert api_client(None).get(_url(owner, resource.id)).status_code == 401


# Selectors


def test_passage_get_finds_only_the_workspaces_passages(owner: Tenant, outsider: Tenant) -> None:
    mine = make_resource(owner.workspace, "Mine", KNITTING[:2], vectors=[VECTOR] * 2)
    theirs = make_resource(outsider.workspace, "Theirs", COOKING[:1], vectors=[VECTOR])
    passage = Passage.objects.get(resource=mine, ordinal=1)
    found = passage_get(workspace=owner.workspace, passage_id=str(passage.id))
    assert found == passage and found.resource == mine and found.text == KNITTING[1]
    foreign = Passage.objects.get(resource=theirs)
    for passage_id in (foreign.id, uuid.uuid4(), "not-a-uuid"):
        with pytest.raises(NotFound):
            passage_get(workspace=owner.workspace, passage_id=passage_id)


def test_passage_list_keeps_to_the_resource(owner: Tenant) -> None:
    first = make_resource(owner.workspace, "First", KNITTING, vectors=[VECTOR] * len(KNITTING))
    make_resource(owner.workspace, "Second", COOKING, vectors=[VECTOR] * len(COOKING))
    listed = list(passage_list(resource=first).order_by("ordinal"))
    assert [p.text for p in listed] == KNITTING


# Indexing


def _chunks(texts: list[str]) -> list[Chunk]:
    offsets = [0]
    for text in texts:
        offsets.append(offsets[-1] + len(text) + 1)
    return [
        Chunk(
            ordinal=i,
            text=text,
            char_start=offsets[i],
            char_end=offsets[i] + len(text),
            page=i + 1,
            token_count=3,
        )
        for i, text in enumerate(texts)
    ]


def _resource(tenant: Tenant, title: str) -> Resource:
    return make_resource(tenant.workspace, title, [], vectors=[])


def test_embedded_chunks_carry_the_real_models_vectors() -> None:
    embedded = indexing.chunks_embed(chunks=_chunks(SOLAR[:3]))
    embedder = get_embedder()
    assert embedded.model_name == embedder.model_name
    assert len(embedded.vectors) == 3 and all(len(v) == EMBEDDING_DIMENSIONS for v in embedded.vectors)
    assert embedded.vectors[0] == pytest.approx(embedder.embed_passages([SOLAR[0]])[0], abs=1e-5)


def test_embedding_reports_progress_between_slices_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(indexing, "EMBED_SLICE", 2)
    beats: list[int] = []
    embedded = indexing.chunks_embed(
        chunks=_chunks(KNITTING + COOKING[:1]), on_progress=lambda: beats.append(1)
    )
    assert len(embedded.vectors) == 5
    assert len(beats) == 2  # after slices one and two; none after the last
    beats.clear()
    indexing.chunks_embed(chunks=_chunks(KNITTING[:2]), on_progress=lambda: beats.append(1))
    assert beats == []


def test_the_fill_stores_each_passages_answer_unit_vectors(owner: Tenant) -> None:
    """Ingestion writes passages without them; the fill (the worker's sweep)
    stores each distinct unit (and heading) text of each passage, by digest,
    with the model's own vector for it alone (float16: within 0.001)."""
    text = "Care\n\nWash the sweater by hand in cold water. Dry it flat on a towel, away from heat."
    chunks = _chunks([text, KNITTING[0], "What about moths?"])
    resource = _resource(owner, "Care")
    with transaction.atomic():
        indexing.passages_replace(resource=resource, embedded=indexing.chunks_embed(chunks=chunks))
    assert set(PassageUnits.objects.values_list("vectors", flat=True)) == {b""}  # queued
    assert indexing.unit_vectors_fill(batch=2) == 3
    embedder = get_embedder()
    for chunk in chunks:
        blob = _units(Passage.objects.get(resource=resource, ordinal=chunk.ordinal))
        stored = unpack(blob, dimensions=EMBEDDING_DIMENSIONS)
        texts = unit_texts(chunk.text)
        assert set(stored) == {digest(t) for t in texts} and blob  # made, even with no units
        for unit in texts:
            assert stored[digest(unit)] == pytest.approx(embedder.embed_passages([unit])[0], abs=1e-3)
    assert unit_texts(text) == [
        "Wash the sweater by hand in cold water.",
        "Care",
        "Dry it flat on a towel, away from heat.",
    ]
    assert unit_texts("What about moths?") == []
    assert indexing.unit_vectors_fill() == 0  # nothing twice
    # Re-ingested, the old passages' rows go with them (the database's cascade).
    with transaction.atomic():
        indexing.passages_replace(resource=resource, embedded=indexing.chunks_embed(chunks=chunks[:1]))
    assert PassageUnits.objects.count() == 1 and _units(Passage.objects.get(resource=resource)) == b""
    resource.delete()
    assert not PassageUnits.objects.exists()


def _units(passage: Passage) -> bytes:
    return bytes(PassageUnits.objects.get(passage=passage).vectors)


def _queue(*resources: Resource) -> None:
    """Queue the passages' units as ingestion does (make_resource writes passages only)."""
    passages = Passage.objects.filter(resource__in=resources)
    PassageUnits.objects.bulk_create(PassageUnits(passage=p) for p in passages)


def test_the_sweep_yields_to_ingestion_and_runs_once_at_a_time(owner: Tenant) -> None:
    ready = make_resource(owner.workspace, "Knitting", KNITTING)
    _queue(ready)
    waiting = make_resource(owner.workspace, "Cooking", [], status=ResourceStatus.PENDING, vectors=[])
    assert indexing.unit_vectors_sweep(budget_seconds=60) == 0  # an upload waits
    Resource.objects.filter(pk=waiting.pk).update(status=ResourceStatus.READY)
    other = connections.create_connection("default")  # another sweep's session holds the lock
    try:
        with other.cursor() as held:
            held.execute("SELECT pg_advisory_lock(%s)", [indexing._UNITS_LOCK])
            assert indexing.unit_vectors_sweep(budget_seconds=60) == 0
            held.execute("SELECT pg_advisory_unlock(%s)", [indexing._UNITS_LOCK])
    finally:
        other.close()
    assert indexing.unit_vectors_sweep(budget_seconds=60) == len(KNITTING)
    assert not PassageUnits.objects.filter(passage__resource=ready, vectors=b"").exists()


def test_chunk_size_never_exceeds_the_models_window(settings: Settings) -> None:
    window = get_embedder().max_seq_length - 2
    settings.CHUNK_SIZE_TOKENS = window + 100
    params = indexing.chunking_params()
    assert params.size == window
    assert params.tokenizer is not None
    settings.CHUNK_SIZE_TOKENS = 50
    assert indexing.chunking_params().size == 50


@pytest.mark.django_db(transaction=True)
def test_replacing_passages_outside_a_transaction_is_refused(owner: Tenant) -> None:
    resource = _resource(owner, "Doc")
    embedded = indexing.chunks_embed(chunks=_chunks(KNITTING[:1]))
    with pytest.raises(RuntimeError, match="inside the caller's transaction"):
        indexing.passages_replace(resource=resource, embedded=embedded)
    assert not Passage.objects.filter(resource=resource).exists()


def test_replacing_swaps_the_old_passages_for_the_new_and_search_sees_them(owner: Tenant) -> None:
    resource = _resource(owner, "Hobby")
    with transaction.atomic():
        written = indexing.passages_replace(
            resource=resource, embedded=indexing.chunks_embed(chunks=_chunks(KNITTING))
        )
    assert written == len(KNITTING)
    hits = search(workspace=owner.workspace, query="knitting needles", legs=Legs(dense=True, lexical=True))
    assert hits and hits[0].resource_id == resource.id

    with transaction.atomic():
        written = indexing.passages_replace(
            resource=resource, embedded=indexing.chunks_embed(chunks=_chunks(COOKING[:2]))
        )
    assert written == 2
    stored = list(Passage.objects.filter(resource=resource).order_by("ordinal"))
    assert [p.text for p in stored] == COOKING[:2]
    assert [(p.char_start, p.page, p.token_count) for p in stored] == [(0, 1, 3), (len(COOKING[0]) + 1, 2, 3)]
    assert {p.workspace_id for p in stored} == {owner.workspace.id}
    # The lexical leg sees the new text only.
    lexical = search(
        workspace=owner.workspace, query="knitting needles", legs=Legs(dense=False, lexical=True)
    )
    assert lexical == []


def test_replacing_many_resources_at_once_counts_each(owner: Tenant) -> None:
    first, second, untouched = _resource(owner, "A"), _resource(owner, "B"), _resource(owner, "C")
    with transaction.atomic():
        indexing.passages_replace(
            resource=untouched, embedded=indexing.chunks_embed(chunks=_chunks(SOLAR[:1]))
        )
        counts = indexing.passages_replace_many(
            items=[
                (first, indexing.chunks_embed(chunks=_chunks(KNITTING))),
                (second, indexing.chunks_embed(chunks=_chunks(COOKING))),
            ]
        )
        assert indexing.passages_replace_many(items=[]) == {}
    assert counts == {first.id: len(KNITTING), second.id: len(COOKING)}
    assert Passage.objects.filter(resource=untouched).count() == 1


def test_deleting_a_resources_passages_takes_it_out_of_search(owner: Tenant) -> None:
    resource = make_resource(owner.workspace, "Solar", SOLAR[:4])
    other = make_resource(owner.workspace, "Cooking", COOKING)
    indexing.passages_delete(resource_id=resource.id)
    assert not Passage.objects.filter(resource=resource).exists()
    assert Passage.objects.filter(resource=other).count() == len(COOKING)
    results = search(workspace=owner.workspace, query="solar panels", top_k=10)
    assert {r.resource_id for r in results} == {other.id}


# System check and the admin


def test_the_dimension_check_passes_when_settings_match_the_schema(settings: Settings) -> None:
    settings.EMBEDDING_DIMENSIONS = EMBEDDING_DIMENSIONS
    assert embedding_dimensions_match_schema(None) == []


def test_the_dimension_check_fails_naming_both_sizes(settings: Settings) -> None:
    settings.EMBEDDING_DIMENSIONS = 768
    errors = embedding_dimensions_match_schema(None)
    assert len(errors) == 1
    error = errors[0]
    assert isinstance(error, Error) and error.id == "retrieval.E001"
    assert "EMBEDDING_DIMENSIONS=768" in error.msg and f"{EMBEDDING_DIMENSIONS}-dimensional" in error.msg
    assert error.hint is not None and "migration" in error.hint


def test_passages_are_read_only_in_the_admin(owner: Tenant) -> None:
    resource = make_resource(owner.workspace, "Knitting", KNITTING, vectors=[VECTOR] * len(KNITTING))
    browser = Client()
    browser.force_login(User.objects.create_superuser("root", "root@example.org", "a-long-test-password-91"))
    listing = browser.get("/admin/retrieval/passage/", {"q": str(resource.id)})
    assert listing.status_code == 200
    assert KNITTING[0] in listing.content.decode()
    passage = Passage.objects.filter(resource=resource).first()
    assert passage is not None
    assert browser.get("/admin/retrieval/passage/add/").status_code == 403
    assert browser.post(f"/admin/retrieval/passage/{passage.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Passage.objects.filter(pk=passage.pk).exists()


def test_embed_units_stores_the_vectors_of_passages_ingested_without_them(
    owner: Tenant, outsider: Tenant
) -> None:
    mine = make_resource(owner.workspace, "Knitting", KNITTING)
    theirs = make_resource(outsider.workspace, "Cooking", COOKING)
    foreign = make_resource(owner.workspace, "Solar", SOLAR[:1], model="another-model")
    # Written outside ingestion: no rows yet; the command queues them first.
    assert not PassageUnits.objects.exists()
    out = io.StringIO()
    call_command("embed_units", "--workspace", str(owner.workspace.id), "--batch", "2", stdout=out)
    assert f"queued {len(KNITTING) + 1} passages" in out.getvalue()  # the workspace's own only
    assert f"for {len(KNITTING)} passages" in out.getvalue()  # by the configured model only
    for passage in Passage.objects.filter(resource=mine):
        stored = unpack(_units(passage), dimensions=EMBEDDING_DIMENSIONS)
        assert set(stored) == {digest(t) for t in unit_texts(passage.text)}
    assert not PassageUnits.objects.filter(passage__resource=theirs).exists()
    assert _units(Passage.objects.get(resource=foreign)) == b""
    call_command("embed_units", stdout=out)  # the rest; nothing twice
    assert f"queued {len(COOKING)} passages" in out.getvalue().splitlines()[-2]
    assert f"for {len(COOKING)} passages" in out.getvalue().splitlines()[-1]
    assert not PassageUnits.objects.filter(passage__resource=foreign).exclude(vectors=b"").exists()
    with pytest.raises(CommandError, match="not a workspace id"):
        call_command("embed_units", "--workspace", "nope")
