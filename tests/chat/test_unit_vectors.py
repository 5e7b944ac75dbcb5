"""A turn's answerability check reads the answer units' vectors stored with
the passages (retrieval/unit_vectors.py) instead of running the model on
them, and reuses the question's vector from search: real model, real rows."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator

import pytest
from django.db import transaction

from chat.answerability import assess
from resources.chunking import Chunk
from resources.models import Resource, ResourceStatus
from retrieval import embeddings, indexing
from retrieval.embeddings import get_embedder
from retrieval.models import Passage, PassageUnits
from retrieval.search import search
from tests.conftest import Tenant

DOCUMENT = [
    "Returns\n\nA toaster may be returned within 30 days of delivery. The receipt is required for a refund.",
    "Warranty\n\nThe heating element is covered for two years. Dropping the toaster is not covered.",
    "Cleaning\n\nEmpty the crumb tray every week. Never put the toaster in the dishwasher.",
]
QUESTION = "How long is the heating element covered?"


@pytest.fixture(autouse=True)
def _empty_vector_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with the process's cache of vectors empty."""
    monkeypatch.setattr(embeddings, "_vectors", OrderedDict())


class ModelCalls:
    """Records the texts the embedding model is asked for (the real model still answers)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.texts: list[str] = []
        embedder = get_embedder()
        for side in ("embed_queries", "embed_passages"):
            monkeypatch.setattr(embedder, side, self._spy(getattr(embedder, side)))

    def _spy(
        self, real: Callable[[list[str]], list[list[float]]]
    ) -> Callable[[list[str]], list[list[float]]]:
        def spy(texts: list[str]) -> list[list[float]]:
            self.texts.extend(texts)
            return real(texts)

        return spy


@pytest.fixture
def ingested(owner: Tenant) -> Iterator[Resource]:
    """A resource written the way the ingestion worker writes one."""
    resource = Resource.objects.create(
        workspace=owner.workspace,
        title="Toaster T2",
        content_type="text/plain",
        size_bytes=100,
        sha256="0" * 64,
        status=ResourceStatus.READY,
        passage_count=len(DOCUMENT),
    )
    chunks = [
        Chunk(ordinal=i, text=text, char_start=0, char_end=len(text), page=None, token_count=20)
        for i, text in enumerate(DOCUMENT)
    ]
    with transaction.atomic():
        indexing.passages_replace(resource=resource, embedded=indexing.chunks_embed(chunks=chunks))
    indexing.unit_vectors_fill()  # the worker's sweep
    yield resource


def test_a_turn_runs_the_model_on_nothing_stored(
    owner: Tenant, ingested: Resource, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = ModelCalls(monkeypatch)
    passages = search(workspace=owner.workspace, query=QUESTION)
    assert calls.texts == [QUESTION]  # search embeds the question
    assessment = assess(QUESTION, passages)
    assert calls.texts == [QUESTION]  # the check reuses it, and every unit's vector is stored
    best = max(assessment.scores, key=lambda i: assessment.scores[i])
    assert assessment.sentences[best].text == "The heating element is covered for two years."


def test_stored_vectors_score_as_the_model_does(owner: Tenant, ingested: Resource) -> None:
    """float16 storage moves no score by more than 0.002; a passage without
    stored vectors (written before them, or by a bulk load) is scored by
    running the model, as before."""
    passages = search(workspace=owner.workspace, query=QUESTION)
    stored = assess(QUESTION, passages, context=f"toaster warranty {QUESTION}")
    PassageUnits.objects.filter(passage__resource=ingested).update(vectors=b"")
    computed = assess(QUESTION, passages, context=f"toaster warranty {QUESTION}")
    assert stored.scores.keys() == computed.scores.keys()
    for index, score in computed.scores.items():
        assert stored.scores[index] == pytest.approx(score, abs=2e-3)


def test_another_models_vectors_are_not_used(
    owner: Tenant, ingested: Resource, monkeypatch: pytest.MonkeyPatch
) -> None:
    passages = search(workspace=owner.workspace, query=QUESTION)
    # Another model's passage (which search no longer returns): its stored unit vectors are not read.
    Passage.objects.filter(resource=ingested).update(embedding_model="another-model")
    calls = ModelCalls(monkeypatch)
    assess(QUESTION, passages)
    assert "The heating element is covered for two years." in calls.texts
