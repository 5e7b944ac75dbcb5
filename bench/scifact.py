"""SciFact (BEIR layout) read from the shared dataset folder, never copied.

Each abstract becomes one ready resource with one passage (title + text),
embedded with the service's own embedder. all-MiniLM-L6-v2 reads at most 256
word pieces, so the tail of a long abstract does not reach the dense leg
(the lexical leg sees all of it).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bench._django import REPO

if TYPE_CHECKING:  # the models load after Django's setup
    from workspaces.models import Workspace

# ../shared/datasets/scifact beside the checkout (read in place, never copied).
DATASET = REPO.parent / "shared" / "datasets" / "scifact"
CACHE = REPO / ".data" / "bench"


@dataclass(frozen=True)
class SciFact:
    corpus: list[dict[str, str]]  # {"_id", "title", "text"}
    queries: dict[str, str]  # query id -> claim
    qrels: dict[str, set[str]]  # query id -> relevant corpus ids


def load(dataset: Path = DATASET) -> SciFact:
    with (dataset / "corpus.jsonl").open() as f:
        corpus = [json.loads(line) for line in f if line.strip()]
    with (dataset / "queries.jsonl").open() as f:
        queries = {q["_id"]: q["text"] for q in map(json.loads, f) if q}
    qrels: dict[str, set[str]] = {}
    with (dataset / "qrels" / "train.tsv").open() as f:
        next(f)
        for line in f:
            query_id, corpus_id, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                qrels.setdefault(query_id, set()).add(corpus_id)
    return SciFact(corpus=corpus, queries={q: queries[q] for q in qrels}, qrels=qrels)


def sample(data: SciFact, *, queries: int, corpus: int) -> SciFact:
    """The first ``queries`` queries (0: all) over a corpus of ``corpus``
    abstracts (0: all): every abstract relevant to one of them, then the
    corpus's first others. A smaller corpus is easier (fewer distractors):
    compare models on the same sample, never a sample with the full set."""
    kept = dict(list(data.queries.items())[:queries]) if queries else data.queries
    if not corpus:
        return SciFact(corpus=data.corpus, queries=kept, qrels={q: data.qrels[q] for q in kept})
    relevant = set().union(*(data.qrels[q] for q in kept))
    chosen = [d for d in data.corpus if d["_id"] in relevant]
    chosen += [d for d in data.corpus if d["_id"] not in relevant][: max(0, corpus - len(chosen))]
    return SciFact(corpus=chosen, queries=kept, qrels={q: data.qrels[q] for q in kept})


def document_text(doc: dict[str, str]) -> str:
    return f"{doc['title']}\n\n{doc['text']}".strip()


def embeddings(data: SciFact) -> np.ndarray:
    """The corpus embeddings (cached under .data/bench, keyed by model, backend and corpus)."""
    from django.conf import settings

    from retrieval.embeddings import get_embedder

    embedder = get_embedder()
    texts = [document_text(doc) for doc in data.corpus]
    backend = f"{settings.EMBEDDING_BACKEND}-{settings.EMBEDDING_ONNX_PRECISION}"
    digest = hashlib.sha256("\x00".join([embedder.model_name, backend, *texts]).encode()).hexdigest()[:16]
    path = CACHE / f"scifact-{digest}.npy"
    if path.exists():
        cached: np.ndarray = np.load(path)
        return cached
    CACHE.mkdir(parents=True, exist_ok=True)
    vectors = np.asarray(embedder.embed_passages(texts), dtype=np.float32)
    np.save(path, vectors)
    return vectors


def load_workspace(data: SciFact, vectors: np.ndarray, name: str = "scifact") -> Workspace:
    """The benchmark workspace, loaded once (each abstract one ready resource)
    for each embedding model (a search compares only its workspace's model's)."""
    from django.conf import settings

    from resources.models import Resource, ResourceStatus
    from retrieval.models import Passage
    from retrieval.passage_analysis import passage_analysis
    from workspaces.models import Organization, Workspace

    organization, _ = Organization.objects.get_or_create(name="bench")
    workspace, _ = Workspace.objects.get_or_create(organization=organization, name=name)
    model = settings.EMBEDDING_MODEL_NAME
    # Loaded outside ingestion: searched with the model its passages are (re)loaded with.
    Workspace.objects.filter(pk=workspace.pk).update(embedding_model=model)
    workspace.embedding_model = model
    if Passage.objects.filter(workspace=workspace, embedding_model=model).count() == len(data.corpus):
        return workspace
    Resource.objects.filter(workspace=workspace).delete()
    batch = 500
    for start in range(0, len(data.corpus), batch):
        docs = data.corpus[start : start + batch]
        texts = [document_text(d) for d in docs]
        resources = Resource.objects.bulk_create(
            Resource(
                workspace=workspace,
                title=d["title"][:500] or d["_id"],
                filename=d["_id"],
                content_type="text/plain",
                size_bytes=len(t.encode()),
                sha256=hashlib.sha256(f"{d['_id']}\n{t}".encode()).hexdigest(),
                status=ResourceStatus.READY,
                passage_count=1,
            )
            for d, t in zip(docs, texts, strict=True)
        )
        Passage.objects.bulk_create(
            Passage(
                workspace=workspace,
                resource=r,
                ordinal=0,
                text=t,
                char_start=0,
                char_end=len(t),
                token_count=len(t.split()),
                embedding=vectors[start + i].tolist(),
                embedding_model=model,
                **passage_analysis(t),
            )
            for i, (r, t) in enumerate(zip(resources, texts, strict=True))
        )
    return workspace
