#!/usr/bin/env python
"""Retrieval and answers across languages, through the service.

    .venv/bin/python bench/language_quality.py --json bench/results/language_quality_minilm.json
    .venv/bin/python bench/language_quality.py --sets topics --limit 10      # a quick look

On ../shared/datasets/multilingual-dev (read its README; read in place,
never copied), with the embedding model the settings name
(EMBEDDING_MODEL_NAME, EMBEDDING_MODEL, EMBEDDING_BACKEND): the same script
measures before and after a change of model. Its own database
``daneshyar_bench_languages``; the organization ``bench-languages`` is made
afresh every run, because ingesting it is one of the measurements.

Every document is one text upload (``resources_create_many``, what
``POST …/resources/batch/`` runs) ingested by the ingestion task in this
process (CELERY_TASK_ALWAYS_EAGER): parsing, chunking, embedding, passages.
Every search is ``retrieval.search.search`` (``POST …/search/``) with the
workspace's ``top_k`` of 5 passages; recall@k is whether the right document
gives one of the first k passages. Each figure is given for the hybrid (the
service's default), dense only and lexical only.

- ``topics`` (30 topics x en fa ar de fr, each passage one document): a
  workspace per language; each language's questions over each language's
  passages (a 5x5 matrix; the diagonal is same-language), and a mixed
  workspace (topic *i* in language *i* mod 5) asked in each language. The
  same-language bias: in the mixed workspace, of the questions whose answer
  is in another language, how often a wrong passage in the question's own
  language comes first (and the share of wrong first results in the
  question's language, against the share of wrong passages that are).
- ``parsinlu`` (125 Persian questions, each distinct passage one document):
  search recall@1/@5, and each question as a chat turn (``TurnRequest`` →
  ``turn_prepare`` → ``turn_complete``, what ``POST …/chat/`` runs) on the
  extractive engine: the first citation from the right passage, the reply in
  Persian (the rule in bench/multilingual.py), "the documents don't say"
  (``grounding: none``), p50/p95 ms per turn.
- timing, same run: query embedding p50/p95 (the embedder's ``embed_queries``
  on every question, uncached), and ingestion documents/s through the
  service against the embedder's raw ``embed_passages`` of the same
  documents and of the passages the ingestion made (identical work), and
  the share of the service's time spent inside the model's encode (what
  the rest of the pipeline adds, unmoved by the machine's load).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django
from bench.multilingual import (
    LANGUAGES,
    ReadingQuestion,
    Topic,
    load_reading,
    load_topics,
    mean,
    mixed_language,
    percentile,
    recall,
    script_language,
)

ORGANIZATION = "bench-languages"
SETS = ("topics", "parsinlu")


@dataclass
class Throughput:
    documents: int = 0
    passages: int = 0
    pipeline_s: float = 0.0
    # Of pipeline_s, the seconds inside the model's encode: the rest is what
    # the service adds (parsing, chunking, the lexical analysis, the writes),
    # a share that does not move with the machine's load as the two separate
    # timings do.
    pipeline_model_s: float = 0.0
    raw_documents_s: float = 0.0
    raw_passages_s: float = 0.0

    def figures(self) -> dict[str, float]:
        return {
            **asdict(self),
            "pipeline_documents_per_s": self.documents / self.pipeline_s,
            "raw_documents_per_s": self.documents / self.raw_documents_s,
            "raw_passages_documents_per_s": self.documents / self.raw_passages_s,
            "ratio_to_raw_documents": self.raw_documents_s / self.pipeline_s,
            "ratio_to_raw_passages": self.raw_passages_s / self.pipeline_s,
            "model_share_of_pipeline": self.pipeline_model_s / self.pipeline_s,
        }


def all_legs() -> dict[str, Any]:
    from retrieval.search.plan import Legs

    return {
        "hybrid": Legs(dense=True, lexical=True),
        "dense": Legs(dense=True, lexical=False),
        "lexical": Legs(dense=False, lexical=True),
    }


def ingest(workspace: Any, texts: Sequence[str], throughput: Throughput) -> list[uuid.UUID]:
    """Upload ``texts`` as documents, ingested in this process; their ids, in order."""
    from resources.batch_services import NewDocument, resources_create_many
    from resources.models import Resource, ResourceStatus
    from resources.services import text_title
    from retrieval.embeddings import get_embedder
    from retrieval.models import Passage

    documents = [NewDocument(data=t.encode("utf-8"), title=text_title(t)) for t in texts]
    embedder = get_embedder()
    encode = embedder.embed_passages

    def timed(batch: list[str]) -> list[list[float]]:
        started = time.perf_counter()
        try:
            return encode(batch)
        finally:
            throughput.pipeline_model_s += time.perf_counter() - started

    embedder.embed_passages = timed  # type: ignore[method-assign,assignment]
    started = time.perf_counter()
    try:
        outcomes = resources_create_many(workspace=workspace, documents=documents)
    finally:
        throughput.pipeline_s += time.perf_counter() - started
        del embedder.embed_passages
    ids = [o.resource.id for o in outcomes if o.resource is not None]
    ready = Resource.objects.filter(id__in=ids, status=ResourceStatus.READY).count()
    if len(ids) != len(texts) or ready != len(ids):
        raise RuntimeError(f"{workspace.name}: {ready} of {len(texts)} documents ready")
    passages = list(Passage.objects.filter(resource_id__in=ids).values_list("text", flat=True))
    started = time.perf_counter()
    embedder.embed_passages(list(texts))
    throughput.raw_documents_s += time.perf_counter() - started
    started = time.perf_counter()
    embedder.embed_passages(passages)
    throughput.raw_passages_s += time.perf_counter() - started
    throughput.documents += len(texts)
    throughput.passages += len(passages)
    return ids


def ranked_resources(workspace: Any, query: str, legs: Any) -> list[uuid.UUID]:
    from retrieval.search.service import search

    return [p.resource_id for p in search(workspace=workspace, query=query, legs=legs)]


# --- the topics set ----------------------------------------------------------------


@dataclass(frozen=True)
class TopicSpaces:
    """The workspaces of the topics set and which topic (and language) each document is."""

    by_language: dict[str, Any]
    mixed: Any
    topic_of: dict[uuid.UUID, int]
    language_of: dict[uuid.UUID, str]


def topics_load(organization: Any, topics: Sequence[Topic], throughput: Throughput) -> TopicSpaces:
    from workspaces.models import Workspace

    topic_of: dict[uuid.UUID, int] = {}
    language_of: dict[uuid.UUID, str] = {}
    by_language = {}
    for language in LANGUAGES:
        workspace = Workspace.objects.create(organization=organization, name=f"topics-{language}")
        ids = ingest(workspace, [t.passages[language] for t in topics], throughput)
        topic_of.update(zip(ids, [t.index for t in topics], strict=True))
        language_of.update(dict.fromkeys(ids, language))
        by_language[language] = workspace
    mixed = Workspace.objects.create(organization=organization, name="topics-mixed")
    ids = ingest(mixed, [t.passages[mixed_language(t.index)] for t in topics], throughput)
    topic_of.update(zip(ids, [t.index for t in topics], strict=True))
    language_of.update(zip(ids, [mixed_language(t.index) for t in topics], strict=True))
    return TopicSpaces(by_language, mixed, topic_of, language_of)


def _pair(ranks: Sequence[list[int]], rights: Sequence[int]) -> dict[str, float]:
    return {
        f"recall@{k}": mean([recall(r, right, k) for r, right in zip(ranks, rights, strict=True)])
        for k in (1, 5)
    }


def topics_measure(spaces: TopicSpaces, topics: Sequence[Topic], legs: Any) -> dict[str, Any]:
    rights = [t.index for t in topics]
    pairs: dict[str, dict[str, float]] = {}
    for asked in LANGUAGES:
        for held in LANGUAGES:
            ranks = [
                [
                    spaces.topic_of[r]
                    for r in ranked_resources(spaces.by_language[held], t.questions[asked], legs)
                ]
                for t in topics
            ]
            pairs[f"{asked}>{held}"] = _pair(ranks, rights)
    same = {lang: pairs[f"{lang}>{lang}"] for lang in LANGUAGES}
    cross = [v for k, v in pairs.items() if k[:2] != k[3:]]
    mixed = {}
    # Questions whose answer is in another language; of them, a wrong first
    # result, and a wrong first result in the question's own language.
    bias = {"questions": 0, "wrong_first": 0, "own_language_wrong_first": 0}
    chance: list[float] = []
    for asked in LANGUAGES:
        results = [ranked_resources(spaces.mixed, t.questions[asked], legs) for t in topics]
        mixed[asked] = _pair([[spaces.topic_of[r] for r in ranked] for ranked in results], rights)
        for topic, ranked in zip(topics, results, strict=True):
            if mixed_language(topic.index) == asked:
                continue
            bias["questions"] += 1
            own = sum(mixed_language(t.index) == asked for t in topics)
            chance.append(own / (len(topics) - 1))
            first = ranked[0] if ranked else None
            if first is not None and spaces.topic_of[first] != topic.index:
                bias["wrong_first"] += 1
                bias["own_language_wrong_first"] += spaces.language_of[first] == asked
    return {
        "pairs": pairs,
        "same_language": same,
        "same_language_mean": {m: mean([v[m] for v in same.values()]) for m in ("recall@1", "recall@5")},
        "cross_language_mean": {m: mean([v[m] for v in cross]) for m in ("recall@1", "recall@5")},
        "mixed": mixed,
        "mixed_mean": {m: mean([v[m] for v in mixed.values()]) for m in ("recall@1", "recall@5")},
        "same_language_bias": {
            **bias,
            "own_language_wrong_first_share": bias["own_language_wrong_first"] / max(bias["questions"], 1),
            "wrong_first_in_own_language_share": bias["own_language_wrong_first"]
            / max(bias["wrong_first"], 1),
            "share_of_wrong_passages_in_own_language": mean(chance),
        },
    }


# --- Persian reading comprehension -------------------------------------------------------


def parsinlu_load(
    organization: Any, questions: Sequence[ReadingQuestion], throughput: Throughput
) -> tuple[Any, dict[str, uuid.UUID], float]:
    """The workspace (each distinct passage one document), the document of each
    passage, and the seconds its answer units' vectors took (the worker's
    sweep makes them after ingestion; the extractive engine reads them)."""
    from retrieval.indexing import unit_vectors_fill
    from workspaces.models import Workspace

    workspace = Workspace.objects.create(organization=organization, name="parsinlu-rc-dev")
    passages = list(dict.fromkeys(q.passage for q in questions))
    ids = ingest(workspace, passages, throughput)
    started = time.perf_counter()
    unit_vectors_fill(workspace_id=workspace.id)
    return workspace, dict(zip(passages, ids, strict=True)), time.perf_counter() - started


def parsinlu_search(
    workspace: Any, questions: Sequence[ReadingQuestion], document_of: dict[str, uuid.UUID], legs: Any
) -> dict[str, float]:
    ranks = [ranked_resources(workspace, q.question, legs) for q in questions]
    return {
        f"recall@{k}": mean(
            [recall(r, document_of[q.passage], k) for r, q in zip(ranks, questions, strict=True)]
        )
        for k in (1, 5)
    }


def parsinlu_chat(
    workspace: Any, questions: Sequence[ReadingQuestion], document_of: dict[str, uuid.UUID]
) -> dict[str, Any]:
    from bench.conversation_quality import outcome_of, run_turn
    from workspaces import services
    from workspaces.models import ApiKeyScope

    api_key = services.api_key_create(
        organization=workspace.organization, name="bench", scope=ApiKeyScope.ADMIN
    ).api_key
    first_right: list[float] = []
    languages: list[str] = []
    outcomes: list[str] = []
    seconds: list[float] = []
    for index, question in enumerate(questions):
        started = time.perf_counter()
        _, reply = run_turn(
            api_key, workspace, [{"role": "user", "content": question.question}], f"fa-{index}", "extractive"
        )
        seconds.append(time.perf_counter() - started)
        outcomes.append("abstained" if reply.grounding == "none" else outcome_of(reply))
        languages.append(script_language(reply.content))
        cited = [p["source"] for p in reply.response.get("parts", []) if p.get("source")]
        right = bool(cited) and uuid.UUID(cited[0]["resource_id"]) == document_of[question.passage]
        first_right.append(float(right))
    n = len(questions)
    return {
        "turns": n,
        "first_citation_right": mean(first_right),
        "reply_in_persian": languages.count("fa") / n,
        "reply_languages": {lang: languages.count(lang) for lang in sorted(set(languages))},
        "documents_dont_say": outcomes.count("abstained") / n,
        "outcomes": {o: outcomes.count(o) for o in sorted(set(outcomes))},
        "turn_ms": {"p50": 1000 * percentile(seconds, 0.5), "p95": 1000 * percentile(seconds, 0.95)},
    }


# --- timing and the run ---------------------------------------------------------------


def query_embedding_ms(texts: Sequence[str]) -> dict[str, float]:
    """The embedder's own ``embed_queries`` on each text (no cache), in ms."""
    from retrieval.embeddings import get_embedder

    embedder = get_embedder()
    embedder.embed_queries(["warm up"])
    ms = []
    for text in texts:
        started = time.perf_counter()
        embedder.embed_queries([text])
        ms.append(1000 * (time.perf_counter() - started))
    return {"queries": len(ms), "p50": percentile(ms, 0.5), "p95": percentile(ms, 0.95)}


def rule_check(topics: Sequence[Topic], reading: Sequence[ReadingQuestion]) -> dict[str, str]:
    """The reply-language rule on the sets' own texts (bench/multilingual.py)."""

    def count(texts: Sequence[str]) -> str:
        found = [script_language(t) for t in texts]
        return ", ".join(f"{lang} {found.count(lang)}" for lang in sorted(set(found)))

    checked = {
        "parsinlu passages": count(list(dict.fromkeys(q.passage for q in reading))),
        "parsinlu questions": count([q.question for q in reading]),
    }
    for language in LANGUAGES:
        checked[f"topics {language}"] = count(
            [t.passages[language] for t in topics] + [t.questions[language] for t in topics]
        )
    return checked


def run(sets: Sequence[str], limit: int) -> dict[str, Any]:
    from django.conf import settings

    from retrieval.embeddings import get_embedder
    from workspaces.models import Organization

    topics = load_topics()[:limit] if limit else load_topics()
    reading = load_reading()[:limit] if limit else load_reading()
    Organization.objects.filter(name=ORGANIZATION).delete()
    organization = Organization.objects.create(name=ORGANIZATION)
    get_embedder().embed_passages(["warm up"])
    throughput = Throughput()
    out: dict[str, Any] = {
        "model": settings.EMBEDDING_MODEL_NAME,
        "backend": settings.EMBEDDING_BACKEND,
        "precision": settings.EMBEDDING_ONNX_PRECISION if settings.EMBEDDING_BACKEND == "onnx" else "",
        "measured_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "limit": limit,
        "load_average_before": list(os.getloadavg()),
        "reply_language_rule_check": rule_check(topics, reading),
    }
    questions: list[str] = []
    if "topics" in sets:
        spaces = topics_load(organization, topics, throughput)
        out["topics"] = {name: topics_measure(spaces, topics, legs) for name, legs in all_legs().items()}
        questions += [t.questions[lang] for t in topics for lang in LANGUAGES]
    if "parsinlu" in sets:
        workspace, document_of, units_s = parsinlu_load(organization, reading, throughput)
        out["parsinlu"] = {
            "questions": len(reading),
            "documents": len(document_of),
            "search": {
                name: parsinlu_search(workspace, reading, document_of, legs)
                for name, legs in all_legs().items()
            },
            "chat": parsinlu_chat(workspace, reading, document_of),
        }
        out["unit_vectors_s"] = units_s
        questions += [q.question for q in reading]
    out["query_embedding_ms"] = query_embedding_ms(questions)
    out["ingestion"] = throughput.figures()
    out["load_average_after"] = list(os.getloadavg())
    return out


# --- report ---------------------------------------------------------------------------


def report_topics(figures: dict[str, Any]) -> None:
    default = figures["hybrid"]
    print("\ntopics, hybrid: recall@1, questions (rows) over passages (columns)")
    print("       " + " ".join(f"{held:>6s}" for held in LANGUAGES))
    for asked in LANGUAGES:
        row = [default["pairs"][f"{asked}>{held}"]["recall@1"] for held in LANGUAGES]
        print(f"{asked:>6s} " + " ".join(f"{v:6.2f}" for v in row))
    print(
        f"\n{'legs':8s} {'same @1/@5':>11s} {'cross @1/@5':>12s} {'fa>en @1/@5':>12s} "
        f"{'fa>fa @1/@5':>12s} {'mixed @1/@5':>12s} {'own-lang wrong 1st':>19s}"
    )
    for name, f in figures.items():
        bias = f["same_language_bias"]
        cells = [
            f["same_language_mean"],
            f["cross_language_mean"],
            f["pairs"]["fa>en"],
            f["pairs"]["fa>fa"],
            f["mixed_mean"],
        ]
        print(
            f"{name:8s} "
            + " ".join(f"{c['recall@1']:.2f}/{c['recall@5']:.2f}".rjust(12) for c in cells)
            + f"  {bias['own_language_wrong_first_share']:.2f} "
            f"({bias['wrong_first_in_own_language_share']:.2f} of errors; "
            f"chance {bias['share_of_wrong_passages_in_own_language']:.2f})"
        )
    for name, f in figures.items():
        same = " ".join(
            f"{lang} {v['recall@1']:.2f}/{v['recall@5']:.2f}" for lang, v in f["same_language"].items()
        )
        mixed = " ".join(f"{lang} {v['recall@1']:.2f}/{v['recall@5']:.2f}" for lang, v in f["mixed"].items())
        print(f"{name:8s} same-language {same}\n{'':8s} mixed by question  {mixed}")


def report(out: dict[str, Any]) -> None:
    print(f"embedding model {out['model']} ({out['backend']} {out['precision']})")
    print(
        "reply-language rule on the sets' own texts: "
        + "; ".join(f"{k}: {v}" for k, v in out["reply_language_rule_check"].items())
    )
    if "topics" in out:
        report_topics(out["topics"])
    if "parsinlu" in out:
        p = out["parsinlu"]
        print(f"\nparsinlu-rc-dev: {p['questions']} questions, {p['documents']} documents")
        for name, f in p["search"].items():
            print(f"  search {name:8s} recall@1 {f['recall@1']:.2f}  recall@5 {f['recall@5']:.2f}")
        c = p["chat"]
        print(
            f"  chat (extractive): first citation right {c['first_citation_right']:.2f}, "
            f"reply in Persian {c['reply_in_persian']:.2f} {c['reply_languages']}, "
            f"documents don't say {c['documents_dont_say']:.2f}, outcomes {c['outcomes']}, "
            f"turn p50 {c['turn_ms']['p50']:.0f} ms p95 {c['turn_ms']['p95']:.0f} ms"
        )
    q, i = out["query_embedding_ms"], out["ingestion"]
    print(f"\nquery embedding: p50 {q['p50']:.1f} ms, p95 {q['p95']:.1f} ms ({q['queries']} queries)")
    print(
        f"ingestion: {i['documents']} documents, {i['passages']} passages; through the service "
        f"{i['pipeline_documents_per_s']:.1f} documents/s; raw encode of the documents "
        f"{i['raw_documents_per_s']:.1f}/s (ratio {i['ratio_to_raw_documents']:.2f}), of the passages "
        f"{i['raw_passages_documents_per_s']:.1f}/s (ratio {i['ratio_to_raw_passages']:.2f}); "
        f"the model's encode {i['model_share_of_pipeline']:.2f} of the service's time"
    )
    print(f"load average {out['load_average_before'][0]:.1f} -> {out['load_average_after'][0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--limit", type=int, default=0, help="first N topics and N Persian questions")
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated: topics,parsinlu")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args()
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = set(sets) - set(SETS)
    if unknown or not sets:
        parser.error(f"--sets takes {', '.join(SETS)}")
    # The ingestion task runs in this process, when each upload commits.
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
    _django.setup("languages")
    import logging

    logging.getLogger("celery.app.trace").setLevel(logging.WARNING)
    out = run(sets, args.limit)
    report(out)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
