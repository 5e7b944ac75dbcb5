"""Passages made the way ingestion makes them: real embeddings, real rows."""

from __future__ import annotations

import hashlib
import itertools
import os
import subprocess
from collections.abc import Iterator, Sequence

import numpy as np
import pytest
from django.test import override_settings

from daneshyar.config.embedding import MINILM
from resources.models import Resource, ResourceStatus
from retrieval.embeddings import get_embedder
from retrieval.models import Passage
from retrieval.passage_analysis import passages_analysis
from retrieval.search import stats
from tests.project import python_run
from workspaces.models import Workspace

_counter = itertools.count()


@pytest.fixture
def minilm() -> Iterator[None]:
    """all-MiniLM-L6-v2 configured (the default is multilingual-e5-small), for
    a test of arithmetic fitted to MiniLM's scores; request it before the
    workspace, which takes the configured model when it is created."""
    with override_settings(EMBEDDING_BACKEND="onnx", EMBEDDING_MODEL_NAME=MINILM):
        yield


@pytest.fixture(autouse=True)
def _fresh_lexical_stats() -> Iterator[None]:
    stats.clear_stats_cache()
    yield
    stats.clear_stats_cache()


def make_resource(
    workspace: Workspace,
    title: str,
    texts: Sequence[str],
    *,
    status: str = ResourceStatus.READY,
    vectors: Sequence[Sequence[float]] | None = None,
    model: str | None = None,
) -> Resource:
    """A resource with one passage per text (embedded unless ``vectors``
    given), stored as the configured model's vectors unless ``model`` names
    another (a search compares only the configured model's)."""
    body = "\n".join(texts)
    resource = Resource.objects.create(
        workspace=workspace,
        title=title,
        content_type="text/plain",
        size_bytes=len(body.encode()),
        sha256=hashlib.sha256(f"{next(_counter)}:{body}".encode()).hexdigest(),
        status=status,
        passage_count=len(texts),
    )
    embeddings = vectors if vectors is not None else get_embedder().embed_passages(list(texts))
    Passage.objects.bulk_create(
        Passage(
            workspace=workspace,
            resource=resource,
            ordinal=i,
            text=text,
            char_start=0,
            char_end=len(text),
            token_count=len(text.split()),
            embedding=list(vector),
            embedding_model=model or get_embedder().model_name,
            **analysis,
        )
        for i, (text, vector, analysis) in enumerate(
            zip(texts, embeddings, passages_analysis(texts), strict=True)
        )
    )
    return resource


def vectors_near(text: str, count: int, *, noise: float, seed: int = 0) -> list[list[float]]:
    """Unit vectors scattered around ``text``'s embedding (cheap bulk passages)."""
    rng = np.random.default_rng(seed)
    centre = np.asarray(get_embedder().embed_passages([text])[0])
    points = centre + rng.normal(scale=noise, size=(count, centre.size))
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    return [row.tolist() for row in points]


def embedding_settings_of(**variables: str) -> subprocess.CompletedProcess[str]:
    """A process of its own, started with ``variables`` and no other
    EMBEDDING_* variable, prints the EMBEDDING_BACKEND and
    EMBEDDING_MODEL_NAME it reads (its last line: backend, then name)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EMBEDDING_")}
    env.update(DJANGO_SETTINGS_MODULE="daneshyar.settings", **variables)
    code = (
        "import django; django.setup(); from django.conf import settings as s;"
        "print(s.EMBEDDING_BACKEND, s.EMBEDDING_MODEL_NAME)"
    )
    return python_run(code, env)
