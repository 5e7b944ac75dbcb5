#!/usr/bin/env python
"""Chat across languages: a question in one language over documents in another.

    .venv/bin/python bench/language_quality.py --sets topics     # once: the workspaces
    .venv/bin/python bench/cross_language_chat.py
    .venv/bin/python bench/cross_language_chat.py --pairs ar>en,de>en --limit 10
    .venv/bin/python bench/cross_language_chat.py --sweep chat.answerability.ACROSS_SHIFT=0,0.01,0.02

On the workspaces the last ``bench/language_quality.py`` run left in
``daneshyar_bench_languages`` (one per language of the topics set of
../shared/datasets/multilingual-dev, each passage one document; run it first,
with the same embedding model), each topic's question in the asked language
is a chat turn (``TurnRequest`` → ``turn_prepare`` → ``turn_complete``, what
``POST …/chat/`` runs) over the workspace of the documents' language, on the
extractive engine. Per pair, and for the same-language diagonal as a
reference:

- first right: the first cited part is from the topic's own passage;
- don't say: the reply is "the documents don't say" (``grounding: none``);
- asked: a form (which one do you mean?);
- lead-in: of the answers, those whose uncited text is in the question's
  language (the rule of bench/multilingual.py reads the script; Latin-script
  languages by the service's own detection);
- marked: of the cited parts in another language than the question's, those
  that carry ``language`` (contract v1.4);
- declined: the same question with its topic's own passage filtered out
  (a metadata filter, ``topic`` ne the topic: its near neighbour stays),
  answered "the documents don't say" (or asked back): not answered from
  the neighbour.

Topics are split by their index: the even ones and the odd ones are printed
apart (fit / held), so a rule chosen on one half is read on the other.
``--sweep module.NAME=v1,v2,…`` runs the pairs again at each value of a
module constant (the rest as configured).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django

PAIRS = "ar>en,de>en,fa>en,fr>en,en>fa,en>ar,fa>ar,ar>fa,en>en,fa>fa"


def reply_language(text: str) -> str:
    from bench.multilingual import script_language
    from languages import detect

    script = script_language(text)
    return script if script in ("fa", "ar") else detect(text)


def measure(pair: str, limit: int) -> dict[str, list[float]]:
    from bench.conversation_quality import outcome_of, run_turn
    from bench.multilingual import load_topics
    from resources.models import Resource
    from retrieval.filter_grammar import filters_parse
    from workspaces import services
    from workspaces.models import ApiKeyScope, Workspace

    asked, held_in = pair.split(">")
    workspace = Workspace.objects.get(organization__name="bench-languages", name=f"topics-{held_in}")
    by_digest = {
        sha: resource_id
        for resource_id, sha in Resource.objects.filter(workspace=workspace).values_list("id", "sha256")
    }
    api_key = services.api_key_create(
        organization=workspace.organization, name="bench", scope=ApiKeyScope.ADMIN
    ).api_key
    figures: dict[str, list[float]] = defaultdict(list)
    topics = load_topics()[: limit or None]
    for topic in topics:
        right = by_digest[hashlib.sha256(topic.passages[held_in].encode("utf-8")).hexdigest()]
        Resource.objects.filter(pk=right).update(metadata={"topic": topic.index})
    for topic in topics:
        right = by_digest[hashlib.sha256(topic.passages[held_in].encode("utf-8")).hexdigest()]
        question = [{"role": "user", "content": topic.questions[asked]}]
        _, reply = run_turn(api_key, workspace, question, f"{pair}-{topic.index}", "extractive")
        half = "fit" if topic.index % 2 == 0 else "held"
        _, without = run_turn(
            api_key,
            workspace,
            question,
            f"{pair}-{topic.index}-without",
            "extractive",
            filters=filters_parse({"type": "ne", "key": "topic", "value": topic.index}),
        )
        figures[f"declined|{half}"].append(float(outcome_of(without) != "answered"))
        parts = reply.response.get("parts", [])
        cited = [p for p in parts if p.get("source")]
        outcome = "abstained" if reply.grounding == "none" else outcome_of(reply)
        first = bool(cited) and str(cited[0]["source"]["resource_id"]) == str(right)
        figures[f"first right|{half}"].append(float(first))
        figures[f"don't say|{half}"].append(float(outcome == "abstained"))
        figures[f"asked|{half}"].append(float(outcome == "asked"))
        if cited:
            own = " ".join(p["text"] for p in parts if not p.get("source")) or " ".join(
                p["text"] for p in cited
            )
            figures[f"lead-in|{half}"].append(float(reply_language(own) == asked))
            for part in cited:
                if reply_language(part["text"]) not in (asked, "und"):
                    figures[f"marked|{half}"].append(float(part.get("language") not in (None, asked)))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", default=PAIRS, help=f"asked>documents, comma-separated (default {PAIRS})")
    parser.add_argument("--limit", type=int, default=0, help="the first N topics (default: all 30)")
    parser.add_argument("--sweep", default="", help="module.NAME=v1,v2,…: the pairs at each value")
    args = parser.parse_args()
    _django.setup("languages")
    from retrieval.embeddings import get_embedder

    get_embedder().embed_queries(["warm up"])
    if not args.sweep:
        table(args.pairs.split(","), args.limit)
        return
    name, values = args.sweep.split("=", 1)
    module_name, attribute = name.rsplit(".", 1)
    module = importlib.import_module(module_name)
    configured = getattr(module, attribute)
    for value in values.split(","):
        setattr(module, attribute, type(configured)(value))
        print(f"\n{name} = {value} (configured {configured})")
        table(args.pairs.split(","), args.limit)
    setattr(module, attribute, configured)


def table(pairs: Sequence[str], limit: int) -> None:
    columns = ("first right", "don't say", "asked", "lead-in", "marked", "declined")
    print(f"{'pair':>6} " + " ".join(f"{c + ' fit/held':>22}" for c in columns))
    totals: dict[str, list[float]] = defaultdict(list)
    for pair in pairs:
        figures = measure(pair, limit)
        across = pair.split(">")[0] != pair.split(">")[1]
        cells = []
        for column in columns:
            halves = [figures.get(f"{column}|{h}", []) for h in ("fit", "held")]
            if across:
                totals[f"{column}|fit"] += halves[0]
                totals[f"{column}|held"] += halves[1]
            cells.append("/".join(_mean(v) for v in halves).rjust(22))
        print(f"{pair:>6} " + " ".join(cells), flush=True)
    print(
        f"{'across':>6} "
        + " ".join("/".join(_mean(totals[f"{c}|{h}"]) for h in ("fit", "held")).rjust(22) for c in columns),
        flush=True,
    )


def _mean(values: Sequence[float]) -> str:
    return f"{sum(values) / len(values):.2f}" if values else "-"


if __name__ == "__main__":
    main()
