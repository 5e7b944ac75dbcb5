#!/usr/bin/env python
"""Whether a conversation rule generalises: fit it on one collection of
MTRAG-UN dev, read it on the other, both directions.

    .venv/bin/python bench/cross_split.py --sweep threshold=0.30,0.34,0.38,0.42,0.46
    .venv/bin/python bench/cross_split.py \\
        --sweep chat.services.turn.clarify.AMBIGUITY_MARGIN=0.03,0.05,0.07,0.10 \\
        --sweep chat.answerability.RANK_WEIGHT=0.0,0.05,0.1,0.2
    .venv/bin/python bench/cross_split.py --base threshold=0.34 \
        --sweep chat.services.turn.decide.STANDOUT_MIN=0,0.04,0.08,0.12

Each ``--sweep NAME=v1,v2,…`` runs the whole service (what ``POST …/chat/``
runs, as ``bench/conversation_quality.py`` does, with the conversation) over
all 219 tasks at each value, the other settings as configured (or as
``--base NAME=value`` sets them). ``NAME`` is
``threshold`` (the workspaces' answerability threshold) or a module constant
``module.NAME``. Per collection (fiqa, clapnq) and value it prints the four
goal figures of issue 32:

- abstained: UNANSWERABLE tasks answered "the documents don't say";
- answered: ANSWERABLE + PARTIAL tasks answered with a citation;
- 1st rel.: of those, the first cited part from a relevant document;
- asked: UNDERSPECIFIED tasks asked back (a form);

their sum (the fitting objective: each goal weighs alike), and the share of
ANSWERABLE + PARTIAL tasks asked back (a form where an answer was due). Then
the value fitted on each collection (the best sum there; ties to the value
nearest the configured one) and the held-out collection's figures at it,
beside its figures as configured. A rule that generalises gives the held-out
collection figures at the other's value as good as at its own best.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django
from bench.conversation_quality import (
    Task,
    bench_caller,
    load_tasks,
    load_workspaces,
    outcome_of,
    run_turn,
)

GOALS = {"abstained": 0.6, "answered": 0.85, "1st rel.": 0.85, "asked": 0.3}


@dataclass(frozen=True)
class Figures:
    abstained: float
    answered: float
    first_relevant: float
    asked: float
    false_asks: float
    counts: str

    @property
    def total(self) -> float:
        return self.abstained + self.answered + self.first_relevant + self.asked

    def row(self) -> str:
        return (
            f"{self.abstained:9.3f} {self.answered:8.3f} {self.first_relevant:8.3f} {self.asked:6.3f} "
            f"{self.total:6.3f} {self.false_asks:10.3f}"
        )


HEADER = f"{'abstained':>9} {'answered':>8} {'1st rel.':>8} {'asked':>6} {'sum':>6} {'false asks':>10}"


def _rate(values: list[bool]) -> float:
    return sum(values) / len(values) if values else 0.0


def measure(tasks: list[Task], workspaces: dict[str, Any], model: str) -> dict[str, Figures]:
    """The goal figures per collection, through the service."""
    api_key, filenames = bench_caller(workspaces)
    seen: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for index, task in enumerate(tasks):
        _, reply = run_turn(api_key, workspaces[task.collection], task.messages(), f"split-{index}", model)
        outcome = outcome_of(reply)
        tally = seen[task.collection]
        if task.answerability == "UNANSWERABLE":
            tally["abstained"].append(outcome == "abstained")
        elif task.answerability == "UNDERSPECIFIED":
            tally["asked"].append(outcome == "asked")
        else:
            tally["answered"].append(outcome == "answered")
            tally["false asks"].append(outcome == "asked")
            if outcome == "answered" and task.relevant:
                first = next(p["source"] for p in reply.response["parts"] if p.get("source"))
                tally["1st rel."].append(filenames[uuid.UUID(first["resource_id"])] in task.relevant)
    return {
        collection: Figures(
            abstained=_rate(t["abstained"]),
            answered=_rate(t["answered"]),
            first_relevant=_rate(t["1st rel."]),
            asked=_rate(t["asked"]),
            false_asks=_rate(t["false asks"]),
            counts=f"{len(t['abstained'])} unanswerable, {len(t['answered'])} answerable, "
            f"{len(t['asked'])} underspecified",
        )
        for collection, t in sorted(seen.items())
    }


@contextmanager
def setting(name: str, value: float, workspaces: dict[str, Any]) -> Iterator[None]:
    """``name`` set to ``value`` for the block (module doc), then restored."""
    if name == "threshold":
        saved = {key: w.answerability_threshold for key, w in workspaces.items()}
        for workspace in workspaces.values():
            workspace.answerability_threshold = value
        try:
            yield
        finally:
            for key, workspace in workspaces.items():
                workspace.answerability_threshold = saved[key]
        return
    module_name, attribute = name.rsplit(".", 1)
    module = importlib.import_module(module_name)
    old = getattr(module, attribute)
    setattr(module, attribute, type(old)(value))
    try:
        yield
    finally:
        setattr(module, attribute, old)


def configured(name: str, workspaces: dict[str, Any]) -> float:
    if name == "threshold":
        return float(next(iter(workspaces.values())).answerability_threshold)
    module_name, attribute = name.rsplit(".", 1)
    return float(getattr(importlib.import_module(module_name), attribute))


def fitted(by_value: dict[float, dict[str, Figures]], collection: str, near: float) -> float:
    key: Callable[[float], tuple[float, float]] = lambda v: (  # noqa: E731
        -round(by_value[v][collection].total, 6),
        abs(v - near),
    )
    return min(by_value, key=key)


def sweep(name: str, values: list[float], tasks: list[Task], workspaces: dict[str, Any], model: str) -> None:
    default = configured(name, workspaces)
    grid = sorted(set(values) | {default})
    by_value: dict[float, dict[str, Figures]] = {}
    print(f"\n{name} (configured {default:g})")
    print(f"{'value':>8} {'collection':>10} {HEADER}")
    for value in grid:
        with setting(name, value, workspaces):
            by_value[value] = measure(tasks, workspaces, model)
        for collection, figures in by_value[value].items():
            print(f"{value:8g} {collection:>10} {figures.row()}", flush=True)
    collections = sorted(by_value[default])
    for collection, figures in by_value[default].items():
        print(f"  {collection}: {figures.counts}")
    for fit_on in collections:
        value = fitted(by_value, fit_on, default)
        for held in (c for c in collections if c != fit_on):
            own = fitted(by_value, held, default)
            print(
                f"fitted on {fit_on}: {value:g}; {held} at it: {by_value[value][held].row()}"
                f"  (as configured: {by_value[default][held].total:.3f}; at its own best {own:g}: "
                f"{by_value[own][held].total:.3f})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sweep", action="append", required=True, help="NAME=v1,v2,… (module doc)")
    parser.add_argument(
        "--base",
        action="append",
        default=[],
        help="NAME=value set for every sweep (the others as configured)",
    )
    parser.add_argument("--model", default="extractive", help="a model id of GET /models/")
    args = parser.parse_args()
    _django.setup("conversation")
    tasks, corpus = load_tasks()
    workspaces = load_workspaces(corpus)
    from retrieval.embeddings import get_embedder

    get_embedder().embed_queries(["warm up"])
    print(f"goals (issue 32, on the held-out split): {GOALS}")
    with ExitStack() as stack:
        for spec in args.base:
            name, value = spec.split("=", 1)
            stack.enter_context(setting(name, float(value), workspaces))
            print(f"base: {name} = {value}")
        for spec in args.sweep:
            name, values = spec.split("=", 1)
            sweep(name, [float(v) for v in values.split(",")], tasks, workspaces, args.model)


if __name__ == "__main__":
    main()
