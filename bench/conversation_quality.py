#!/usr/bin/env python
"""Conversation quality on MTRAG-UN (development split), through the chat service.

    .venv/bin/python bench/conversation_quality.py                 # extractive, all 219 tasks
    .venv/bin/python bench/conversation_quality.py --limit 50 --model extractive

MTRAG-UN (../shared/datasets/mtrag-un-dev, read its README) holds human
multi-turn conversations; the last user turn of each task is the question,
labelled ANSWERABLE, PARTIAL, UNANSWERABLE (no passage answers it) or
UNDERSPECIFIED (the right reply asks which one the user means). Each
collection (fiqa, clapnq) becomes a workspace whose documents are the union
of its tasks' reference passages, one ready resource each (the dataset has no
titles: a document is titled by the first words of its text, a stand-in for
the title a real document has), in the database
``daneshyar_bench_conversation``.

Each task's conversation is sent as ``messages`` (``TurnRequest`` →
``turn_prepare`` → ``turn_complete``, what ``POST …/chat/`` runs), and again
with the last user turn alone. Per answerability class:

- recall@5 / nDCG@5 of the retrieved documents against the qrels, with the
  conversation and with the last turn alone (follow-ups apart);
- answered: replies with at least one cited part;
- first cited relevant: answers whose first cited part is from a relevant document;
- abstained: replies with ``grounding: none`` (the documents don't say);
- asked back: a form (the outcomes as the evaluation API counts them);
- p50 / p95 seconds per turn with the conversation.

Exact peers on the same passages, in the same run: dense (cosine over the
same embeddings), BM25 (``bm25s``) and their reciprocal-rank fusion (k=60),
each on the last turn and on all user turns joined.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import statistics
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django

DATASET = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets" / "mtrag-un-dev"
CLASSES = ("ANSWERABLE", "PARTIAL", "UNANSWERABLE", "UNDERSPECIFIED")


@dataclass(frozen=True)
class Task:
    task_id: str
    collection: str
    users: list[str]
    agents: list[str]
    answerability: str
    follow_up: bool
    relevant: frozenset[str]

    def messages(self) -> list[dict[str, str]]:
        out = []
        for index, user in enumerate(self.users):
            out.append({"role": "user", "content": user})
            if index < len(self.agents) and index < len(self.users) - 1:
                out.append({"role": "assistant", "content": self.agents[index] or "-"})
        return out


def load_tasks(dataset: Path = DATASET) -> tuple[list[Task], dict[str, dict[str, str]]]:
    qrels: dict[str, set[str]] = defaultdict(set)
    for path in sorted((dataset / "qrels").glob("*.tsv")):
        with path.open() as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                qrels[row["query-id"]].add(row["corpus-id"])
    tasks: list[Task] = []
    corpus: dict[str, dict[str, str]] = defaultdict(dict)
    with (dataset / "tasks.jsonl").open() as handle:
        for line in handle:
            raw = json.loads(line)
            for context in raw["contexts"]:
                corpus[raw["Collection"]][context["document_id"]] = context["text"].strip()
            turns = raw["input"]
            tasks.append(
                Task(
                    task_id=raw["task_id"],
                    collection=raw["Collection"],
                    users=[t["text"] for t in turns if t["speaker"] == "user"],
                    agents=[t["text"] for t in turns if t["speaker"] == "agent"],
                    answerability=raw["answerability"][0],
                    follow_up="Follow-up" in raw["Multi-Turn"],
                    relevant=frozenset(qrels.get(raw["task_id"], ())),
                )
            )
    return tasks, corpus


def title_of(text: str) -> str:
    words = text.split()
    return " ".join(words[:8]) + ("…" if len(words) > 8 else "")


def load_workspaces(corpus: dict[str, dict[str, str]]) -> dict[str, Any]:
    """A workspace per collection, each document one ready resource with one
    passage (loaded once), with its answer units' vectors."""
    from django.conf import settings

    from resources.models import Resource, ResourceStatus
    from retrieval.embeddings import get_embedder
    from retrieval.indexing import unit_vectors_fill
    from retrieval.models import Passage, PassageUnits
    from retrieval.passage_analysis import passage_analysis
    from workspaces.models import Organization, Workspace

    organization, _ = Organization.objects.get_or_create(name="bench")
    out = {}
    for collection, documents in corpus.items():
        workspace, _ = Workspace.objects.get_or_create(organization=organization, name=f"mtrag-{collection}")
        out[collection] = workspace
        sample = next(iter(documents.values()))
        model = settings.EMBEDDING_MODEL_NAME  # a search compares only its workspace's model's
        # Loaded outside ingestion: searched with the model its passages are (re)loaded with.
        Workspace.objects.filter(pk=workspace.pk).update(embedding_model=model)
        workspace.embedding_model = model
        loaded = Passage.objects.filter(workspace=workspace, embedding_model=model).count() == len(documents)
        if loaded and Resource.objects.filter(workspace=workspace, title=title_of(sample)).exists():
            continue
        Resource.objects.filter(workspace=workspace).delete()
        ids = sorted(documents)
        texts = [documents[i] for i in ids]
        vectors = get_embedder().embed_passages(texts)
        for document_id, text, vector in zip(ids, texts, vectors, strict=True):
            resource = Resource.objects.create(
                workspace=workspace,
                title=title_of(text),
                filename=document_id,
                content_type="text/plain",
                size_bytes=len(text.encode()),
                sha256=hashlib.sha256(f"{document_id}\n{text}".encode()).hexdigest(),
                status=ResourceStatus.READY,
                passage_count=1,
            )
            Passage.objects.create(
                workspace=workspace,
                resource=resource,
                ordinal=0,
                text=text,
                char_start=0,
                char_end=len(text),
                token_count=len(text.split()),
                embedding=vector,
                embedding_model=settings.EMBEDDING_MODEL_NAME,
                **passage_analysis(text),
            )
    # The answer units' vectors, as the worker's sweep makes them after ingestion.
    for workspace in out.values():
        queued = PassageUnits.objects.values("passage_id")
        missing = Passage.objects.filter(workspace=workspace).exclude(id__in=queued)
        PassageUnits.objects.bulk_create([PassageUnits(passage=p) for p in missing])
        unit_vectors_fill(workspace_id=workspace.id)
    return out


# --- metrics -----------------------------------------------------------------


def recall_at_5(ranked: Sequence[str], relevant: frozenset[str]) -> float:
    return len(set(ranked[:5]) & relevant) / len(relevant)


def ndcg_at_5(ranked: Sequence[str], relevant: frozenset[str]) -> float:
    dcg = sum(1.0 / math.log2(i + 2) for i, doc in enumerate(ranked[:5]) if doc in relevant)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), 5)))
    return dcg / ideal


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


@dataclass
class Tally:
    recall: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    ndcg: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    outcomes: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    first_relevant: dict[str, list[bool]] = field(default_factory=lambda: defaultdict(list))
    seconds: list[float] = field(default_factory=list)


# --- the service ---------------------------------------------------------------


def outcome_of(message: Any) -> str:
    """answered (a cited part), abstained (the documents don't say), asked (a
    form), other: the stored reply's outcome as the evaluation API scores it
    (evaluations/outcomes.py, the dashboard's classification), so that the
    bench and ``--through-evaluation`` count one way."""
    from evaluations.outcomes import reply_evaluated_outcome

    return reply_evaluated_outcome(message)


def run_turn(
    api_key: Any, workspace: Any, messages: list[dict[str, str]], user: str, model: str, filters: Any = None
) -> tuple[Any, Any]:
    from chat.message_list import conversation_parse
    from chat.services.turn import TurnRequest, turn_complete, turn_prepare

    request = TurnRequest(
        principal=api_key,
        workspace=workspace,
        external_user_id=user,
        conversation=conversation_parse(messages),
        model=model,
        filters=filters,
    )
    prepared = turn_prepare(request)
    return prepared, turn_complete(prepared)


def documents_of(prepared: Any, filenames: dict[Any, str]) -> list[str]:
    return list(dict.fromkeys(filenames[p.resource_id] for p in prepared.retrieval.passages))


def bench_caller(workspaces: dict[str, Any]) -> tuple[Any, dict[Any, str]]:
    """An admin key of the workspaces' organization, and each resource's
    file name (its MTRAG-UN document id) by resource id."""
    from resources.models import Resource
    from workspaces import services
    from workspaces.models import ApiKeyScope

    organization = next(iter(workspaces.values())).organization
    api_key = services.api_key_create(
        organization=organization, name="bench", scope=ApiKeyScope.ADMIN
    ).api_key
    filenames = dict(
        Resource.objects.filter(workspace__organization=organization).values_list("id", "filename")
    )
    return api_key, filenames


def measure_service(
    tasks: list[Task], workspaces: dict[str, Any], model: str, *, alone: bool = True
) -> Tally:
    api_key, filenames = bench_caller(workspaces)
    tally = Tally()
    for index, task in enumerate(tasks):
        workspace = workspaces[task.collection]
        started = time.monotonic()
        prepared, reply = run_turn(api_key, workspace, task.messages(), f"bench-{index}", model)
        tally.seconds.append(time.monotonic() - started)
        outcome = outcome_of(reply)
        tally.outcomes[task.answerability].append(outcome)
        tally.outcomes[f"{task.collection}|{task.answerability}"].append(outcome)
        if task.relevant and not alone:
            ranked = documents_of(prepared, filenames)
            for group in ("all", "follow-up" if task.follow_up else "other", task.collection):
                tally.recall[f"conversation|{group}"].append(recall_at_5(ranked, task.relevant))
        elif task.relevant:
            alone_turn, _ = run_turn(
                api_key,
                workspace,
                [{"role": "user", "content": task.users[-1]}],
                f"bench-{index}-alone",
                model,
            )
            for mode, turn in (("conversation", prepared), ("last turn", alone_turn)):
                ranked = documents_of(turn, filenames)
                for group in ("all", "follow-up" if task.follow_up else "other", task.collection):
                    tally.recall[f"{mode}|{group}"].append(recall_at_5(ranked, task.relevant))
                    tally.ndcg[f"{mode}|{group}"].append(ndcg_at_5(ranked, task.relevant))
        if task.relevant and outcome == "answered":
            first = next(p["source"] for p in reply.response["parts"] if p.get("source"))
            relevant = filenames[uuid.UUID(first["resource_id"])] in task.relevant
            tally.first_relevant[task.answerability].append(relevant)
            tally.first_relevant[task.collection].append(relevant)
    return tally


def sweep_weights(
    weights: Sequence[float], tasks: list[Task], workspaces: dict[str, Any], model: str
) -> None:
    """The service's figures at each hybrid dense weight of the configured
    embedding model (retrieval/search/service.py, DENSE_WEIGHTS), per
    collection: a weight fitted on fiqa is read on clapnq and the reverse."""
    from django.conf import settings

    from retrieval.search import fusion

    name = str(settings.EMBEDDING_MODEL_NAME)
    collections = sorted({t.collection for t in tasks})
    print(f"\nmodel {name}; conversation recall@5 per collection, all tasks")
    print(
        f"{'weight':>6} "
        + " ".join(f"{c:>8}" for c in collections)
        + f" {'all':>8} {'abstained':>9} {'1st rel.':>8}"
    )
    for weight in weights:
        fusion.DENSE_WEIGHTS[name] = weight
        tally = measure_service(tasks, workspaces, model)
        per = [statistics.mean(tally.recall[f"conversation|{c}"]) for c in collections]
        abstained = tally.outcomes["UNANSWERABLE"].count("abstained") / max(
            len(tally.outcomes["UNANSWERABLE"]), 1
        )
        firsts = tally.first_relevant["ANSWERABLE"] + tally.first_relevant["PARTIAL"]
        print(
            f"{weight:>6.2f} "
            + " ".join(f"{r:>8.3f}" for r in per)
            + f" {statistics.mean(tally.recall['conversation|all']):>8.3f} {abstained:>9.3f}"
            + f" {statistics.mean(firsts) if firsts else 0.0:>8.3f}",
            flush=True,
        )


def sweep_settings(configs: Sequence[str], tasks: list[Task], workspaces: dict[str, Any], model: str) -> None:
    """The service's figures under each configuration: ``module.NAME=value``
    assignments joined by commas (e.g.
    ``chat.services.turn.followup_search.CONTEXT_WEIGHT=0.5``), each
    collection apart, follow-ups apart: a rule fitted on one collection is
    read on the other. The conversation's retrieval only (not the last turn
    alone); the constants are restored after each."""
    import importlib

    collections = sorted({t.collection for t in tasks})
    print(
        f"\nconversation recall@5; {'configuration':60s} "
        + " ".join(f"{c:>8}" for c in collections)
        + f" {'follow-up':>9} {'all':>6} {'abstained':>9} {'1st rel.':>8}"
    )
    for config in configs:
        saved = []
        for assignment in filter(None, config.split(",")):
            target, value = assignment.split("=", 1)
            module_name, attribute = target.rsplit(".", 1)
            module = importlib.import_module(module_name)
            saved.append((module, attribute, getattr(module, attribute)))
            setattr(module, attribute, type(getattr(module, attribute))(float(value)))
        try:
            tally = measure_service(tasks, workspaces, model, alone=False)
        finally:
            for module, attribute, old in reversed(saved):
                setattr(module, attribute, old)
        per = [statistics.mean(tally.recall[f"conversation|{c}"]) for c in collections]
        abstained = tally.outcomes["UNANSWERABLE"].count("abstained") / max(
            len(tally.outcomes["UNANSWERABLE"]), 1
        )
        firsts = tally.first_relevant["ANSWERABLE"] + tally.first_relevant["PARTIAL"]
        print(
            f"{config or 'as configured':>82} "
            + " ".join(f"{r:>8.3f}" for r in per)
            + f" {statistics.mean(tally.recall['conversation|follow-up']):>9.3f}"
            + f" {statistics.mean(tally.recall['conversation|all']):>6.3f} {abstained:>9.3f}"
            + f" {statistics.mean(firsts) if firsts else 0.0:>8.3f}",
            flush=True,
        )


# --- the same figures through the evaluation API ---------------------------------

EXPECTED_OUTCOME = {
    "ANSWERABLE": "answer",
    "PARTIAL": "answer",
    "UNANSWERABLE": "no_answer",
    "UNDERSPECIFIED": "ask_back",
}


def through_evaluation(tasks: list[Task], workspaces: dict[str, Any], tally: Tally, model: str) -> None:
    """Each collection's tasks as a test set of its workspace (the
    conversation as ``messages``, the qrels as the expected documents, the
    class as the expected outcome), run through ``POST …/evaluations/`` with
    k = 5; the run's metrics beside the bench's figures for the same
    collection (bench/through_evaluation.py)."""
    from bench import through_evaluation as api
    from resources.models import Resource

    print("\nThe same figures through the evaluation API (per collection): bench, run, difference")
    with api.running_worker():
        for collection, workspace in sorted(workspaces.items()):
            ids = dict(Resource.objects.filter(workspace=workspace).values_list("filename", "id"))
            items = [
                {
                    "messages": task.messages(),
                    "expected_resource_ids": sorted(str(ids[d]) for d in task.relevant),
                    "expected_outcome": EXPECTED_OUTCOME[task.answerability],
                }
                for task in tasks
                if task.collection == collection
            ]
            client = api.EvaluationClient(workspace)
            test_set = client.test_set(f"MTRAG-UN dev {collection}", items)
            metrics = client.run(test_set, model=model, k=5, label=collection)["metrics"]
            by = metrics["by_expected_outcome"]

            def share(classes: Sequence[str], outcome: str, collection: str = collection) -> float | None:
                outcomes = [o for c in classes for o in tally.outcomes[f"{collection}|{c}"]]
                return outcomes.count(outcome) / len(outcomes) if outcomes else None

            rows = [
                ("recall@5, conversation", mean(tally.recall[f"conversation|{collection}"]), "recall_at_k"),
                ("nDCG@5, conversation", mean(tally.ndcg[f"conversation|{collection}"]), "ndcg_at_k"),
                ("first cited relevant (answered)", mean(tally.first_relevant[collection]), None),
                ("answerable+partial: answered", share(("ANSWERABLE", "PARTIAL"), "answered"), "answer"),
                ("unanswerable: abstained", share(("UNANSWERABLE",), "abstained"), "no_answer"),
                ("underspecified: asked back", share(("UNDERSPECIFIED",), "asked"), "ask_back"),
            ]
            print(f"{collection}: {len(items)} items")
            for name, bench, key in rows:
                if bench is None:
                    continue  # no task of the class in this collection
                if key is None:
                    figure = metrics["first_citation_expected"]
                elif key in by:
                    figure = by[key]["outcome_right"]
                else:
                    figure = metrics.get(key)
                print("  " + api.parity_line(name, bench, figure))
            latency = f"{metrics['latency_p50_ms']} / {metrics['latency_p95_ms']} ms"
            print(f"  latency p50 / p95 in the run: {latency}")


# --- exact peers -------------------------------------------------------------------


def measure_peers(tasks: list[Task], corpus: dict[str, dict[str, str]]) -> dict[str, dict[str, float]]:
    import logging

    import bm25s
    import numpy as np

    logging.getLogger("bm25s").setLevel(logging.WARNING)

    from retrieval.embeddings import get_embedder

    embedder = get_embedder()
    results: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for collection, documents in corpus.items():
        ids = sorted(documents)
        texts = [documents[i] for i in ids]
        vectors = np.asarray(embedder.embed_passages(texts))
        index = bm25s.BM25()
        index.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
        for task in tasks:
            if task.collection != collection or not task.relevant:
                continue
            queries = {"last turn": task.users[-1], "all turns joined": " ".join(task.users)}
            for mode, query in queries.items():
                dense_scores = vectors @ np.asarray(embedder.embed_queries([query])[0])
                dense = [ids[i] for i in np.argsort(-dense_scores)[:50]]
                hits, _ = index.retrieve(
                    bm25s.tokenize([query], stopwords="en", show_progress=False),
                    k=min(50, len(ids)),
                    show_progress=False,
                )
                lexical = [ids[int(i)] for i in hits[0]]
                fused: dict[str, float] = defaultdict(float)
                for ranked in (dense, lexical):
                    for rank, doc in enumerate(ranked):
                        fused[doc] += 1.0 / (60 + rank + 1)
                rrf = sorted(fused, key=lambda d: -fused[d])
                groups = ("all", "follow-up" if task.follow_up else "other")
                for name, ranked in (("dense", dense), ("bm25", lexical), ("rrf", rrf)):
                    for group in groups:
                        results[f"{name}, {mode}"][f"recall|{group}"].append(
                            recall_at_5(ranked, task.relevant)
                        )
                        results[f"{name}, {mode}"][f"ndcg|{group}"].append(ndcg_at_5(ranked, task.relevant))
    return {name: {k: mean(v) for k, v in d.items()} for name, d in results.items()}


# --- report ------------------------------------------------------------------------


def report(tally: Tally, peers: dict[str, dict[str, float]], model: str) -> None:
    print(f"\nRetrieval (documents, recall@5 / nDCG@5), model {model}:")
    print(f"{'':34s} {'all':>13s} {'follow-ups':>13s} {'others':>13s}")
    for mode in ("conversation", "last turn"):
        row = [
            f"{mean(tally.recall[f'{mode}|{g}']):.3f}/{mean(tally.ndcg[f'{mode}|{g}']):.3f}"
            for g in ("all", "follow-up", "other")
        ]
        print(f"{'service, ' + mode:34s} " + " ".join(f"{c:>13s}" for c in row))
    for name, figures in sorted(peers.items()):
        row = [
            f"{figures[f'recall|{g}']:.3f}/{figures[f'ndcg|{g}']:.3f}" for g in ("all", "follow-up", "other")
        ]
        print(f"{'exact ' + name:34s} " + " ".join(f"{c:>13s}" for c in row))
    print("\nReplies by answerability class:")
    print(
        f"{'class':16s} {'tasks':>5s} {'answered':>9s} {'1st cited rel.':>14s} "
        f"{'abstained':>9s} {'asked back':>10s}"
    )
    for cls in CLASSES:
        outcomes = tally.outcomes.get(cls, [])
        n = max(len(outcomes), 1)
        relevant = tally.first_relevant.get(cls, [])
        rel = f"{mean([float(x) for x in relevant]):.3f}" if relevant else "-"
        print(
            f"{cls:16s} {len(outcomes):5d} {outcomes.count('answered') / n:9.3f} {rel:>14s} "
            f"{outcomes.count('abstained') / n:9.3f} {outcomes.count('asked') / n:10.3f}"
        )
    answerable = tally.outcomes["ANSWERABLE"] + tally.outcomes["PARTIAL"]
    firsts = tally.first_relevant["ANSWERABLE"] + tally.first_relevant["PARTIAL"]
    print(
        f"{'ANSWERABLE+PARTIAL':16s} {len(answerable):5d} "
        f"{answerable.count('answered') / max(len(answerable), 1):9.3f} "
        f"{mean([float(x) for x in firsts]):14.3f}"
    )
    ordered = sorted(tally.seconds)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    print(
        f"\nTurn latency with the conversation: p50 {statistics.median(ordered) * 1000:.0f} ms, "
        f"p95 {p95 * 1000:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="extractive", help="a model id of GET /models/")
    parser.add_argument("--limit", type=int, default=0, help="first N tasks (default: all 219)")
    parser.add_argument("--no-peers", action="store_true", help="skip the exact peers")
    parser.add_argument(
        "--through-evaluation",
        action="store_true",
        help="then the same figures through the evaluation API, per collection, side by side",
    )
    parser.add_argument(
        "--dense-weights",
        default="",
        help="comma-separated hybrid dense weights for the configured model: one line of figures per "
        "weight, each collection apart (fit the weight on one, read it on the other), no full report",
    )
    parser.add_argument(
        "--settings",
        default="",
        help="configurations separated by ';', each module.NAME=value assignments joined by ','"
        " (an empty one: as configured): one line of figures each, each collection apart, no full report",
    )
    args = parser.parse_args()
    _django.setup("conversation")
    tasks, corpus = load_tasks()
    if args.limit:
        tasks = tasks[: args.limit]
    workspaces = load_workspaces(corpus)
    # Load the embedding model outside the timings.
    from retrieval.embeddings import get_embedder

    get_embedder().embed_queries(["warm up"])
    if args.settings:
        sweep_settings(args.settings.split(";"), tasks, workspaces, args.model)
        return
    if args.dense_weights:
        sweep_weights([float(w) for w in args.dense_weights.split(",")], tasks, workspaces, args.model)
        return
    tally = measure_service(tasks, workspaces, args.model)
    peers = {} if args.no_peers else measure_peers(tasks, corpus)
    report(tally, peers, args.model)
    if args.through_evaluation:
        through_evaluation(tasks, workspaces, tally, args.model)


if __name__ == "__main__":
    main()
