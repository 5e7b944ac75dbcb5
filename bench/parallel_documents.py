#!/usr/bin/env python
"""Parallel documents: asking back, answering the named one, "the documents
don't say" for another, and staying on the chosen subject.

    .venv/bin/python bench/parallel_documents.py              # load (first run) and measure
    .venv/bin/python bench/parallel_documents.py --reload     # load the corpus again
    .venv/bin/python bench/parallel_documents.py --family "drug leaflets" --verbose
    .venv/bin/python bench/parallel_documents.py --half fit \
        --sweep chat.services.turn.subjects.DOCUMENT_OVERLAP=0.5,0.6,0.7

The corpus (bench/parallel_docs/corpus.py, README.md there) is loaded into
``daneshyar_bench_parallel``, one workspace per family, each document
uploaded and ingested as the service ingests a file. Every question is a
chat turn (``TurnRequest`` → ``turn_prepare`` → ``turn_complete``, what
``POST …/chat/`` runs) on the extractive engine, in a session, so that a
form's choice and the documents a reply cited carry to the next turn.
Per half (the even families: fit; the odd: held back; ``fresh``: the
families of bench/parallel_docs/fresh.py, written after the rules):

- asked back: the unqualified question gets a form offering two or more
  of the family's documents;
- named answered: a question naming one subject is answered, citing that
  document only;
- uncovered no answer: a question naming a subject no document covers gets
  "the documents don't say";
- follow-up strays: after choosing a subject in the form, and after a
  qualified answer, the family's follow-up cites another document;
- follow-up on subject: those follow-ups answered, citing the subject only,
  with the subject's value for the follow-up (its second fact);
- p95: of every turn's time, in milliseconds.

``--sweep module.NAME=v1,v2,…`` measures again at each value of a module
constant; ``--half fit`` measures the fit half only (a rule is chosen there
and read on the held-back half).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django

ORGANIZATION = "bench-parallel"


def load(reload: bool) -> dict[str, tuple[Any, dict[str, str]]]:
    """Each family's workspace, and its documents' ids by subject name."""
    from bench.parallel_docs.corpus import FAMILIES
    from bench.parallel_docs.fresh import FRESH
    from resources.ingestion import resource_ingest
    from resources.models import Resource
    from resources.services import Upload, resource_create
    from workspaces.models import Organization, Workspace

    organization, _ = Organization.objects.get_or_create(name=ORGANIZATION)
    out = {}
    for family in FAMILIES + FRESH:
        workspace, created = Workspace.objects.get_or_create(organization=organization, name=family.key)
        if reload and not created:
            Resource.objects.filter(workspace=workspace).delete()
        ids = {}
        for subject, text in family.documents():
            filename = f"{subject.name}.txt".replace("/", "-")
            found = Resource.objects.filter(workspace=workspace, filename=filename).first()
            if found is None:
                upload = Upload(data=text.encode(), title=subject.title, filename=filename)
                found = resource_create(workspace=workspace, upload=upload).resource
                assert resource_ingest(resource_id=found.id) == "ready", subject
            ids[subject.name] = str(found.id)
        out[family.key] = (workspace, ids)
    return out


class Runner:
    """Chat turns of one family's workspace, timed."""

    def __init__(self, workspace: Any, verbose: bool) -> None:
        from workspaces import services
        from workspaces.models import ApiKeyScope

        self.workspace = workspace
        self.verbose = verbose
        self.key = services.api_key_create(
            organization=workspace.organization, name="bench", scope=ApiKeyScope.ADMIN
        ).api_key
        self.seconds: list[float] = []

    def turn(self, question: str, session: Any = None) -> tuple[Any, Any]:
        """(the session, the stored reply) of ``question`` in ``session``."""
        from chat.message_list import conversation_parse
        from chat.services.turn import TurnRequest, turn_complete, turn_prepare

        request = TurnRequest(
            principal=self.key,
            workspace=self.workspace,
            external_user_id="bench",
            conversation=conversation_parse([{"role": "user", "content": question}]),
            session_id=session,
            model="extractive",
        )
        start = time.perf_counter()
        prepared = turn_prepare(request)
        reply = turn_complete(prepared)
        self.seconds.append(time.perf_counter() - start)
        if self.verbose:
            print(f"  > {question}\n    {kind(reply)} {cited(reply) or offered(reply)} {text(reply)[:150]!r}")
        return prepared.question.session.id, reply


def kind(reply: Any) -> str:
    return str((reply.reply or {}).get("type"))


def cited(reply: Any) -> set[str]:
    return {str(p["source"]["resource_id"]) for p in (reply.reply or {}).get("parts", []) if p.get("source")}


def text(reply: Any) -> str:
    return " ".join(p["text"] for p in (reply.reply or {}).get("parts", []))


def offered(reply: Any) -> list[str]:
    """The documents a form offers, in order (empty: no form)."""
    form = (reply.reply or {}).get("form") if kind(reply) == "form" else None
    return [c["value"] for c in form["fields"][0].get("choices", [])] if form else []


def measure_family(family: Any, workspace: Any, ids: dict[str, str], verbose: bool) -> dict[str, list[float]]:
    from chat.models import Grounding

    runner = Runner(workspace, verbose)
    out: dict[str, list[float]] = defaultdict(list)
    everyone = set(ids.values())
    for subject in family.subjects:
        own = ids[subject.name]
        # The unqualified question, then the subject chosen, then the follow-up.
        session, form = runner.turn(family.question)
        options = offered(form)
        out["asked back"].append(float(len(set(options) & everyone) >= 2))
        if own in options:
            session, _ = runner.turn(str(options.index(own) + 1), session)
            _, follow = runner.turn(family.follow_up, session)
            strays(out, follow, own, subject.second)
        # The qualified question, then the follow-up.
        session, named = runner.turn(family.qualified.format(mention=subject.mention))
        out["named answered"].append(float(kind(named) == "answer" and cited(named) == {own}))
        if cited(named) == {own}:
            _, follow = runner.turn(family.follow_up, session)
            strays(out, follow, own, subject.second)
    _, uncovered = runner.turn(family.uncovered)
    out["uncovered no answer"].append(float(uncovered.grounding == Grounding.NONE))
    out["seconds"] = runner.seconds
    return out


def strays(out: dict[str, list[float]], follow: Any, own: str, fact: str) -> None:
    """Whether the follow-up cites another document than ``own``, and whether
    it answers from ``own`` with the follow-up's ``fact`` (the subject's
    second value, as its document writes it)."""
    out["follow-up strays"].append(float(bool(cited(follow) - {own})))
    answered = kind(follow) == "answer" and cited(follow) == {own}
    out["follow-up on subject"].append(float(answered and fact in text(follow)))


COLUMNS = ("asked back", "named answered", "uncovered no answer", "follow-up strays", "follow-up on subject")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reload", action="store_true", help="load the corpus again")
    parser.add_argument("--family", default="", help="only this family (its key)")
    parser.add_argument("--verbose", action="store_true", help="print every turn")
    parser.add_argument("--half", choices=("fit", "held", "fresh"), default=None, help="only this half")
    parser.add_argument("--sweep", default="", help="module.NAME=v1,v2,…: measure at each value")
    args = parser.parse_args()
    _django.setup("parallel")
    workspaces = load(args.reload)
    if not args.sweep:
        table(workspaces, args)
        return
    name, values = args.sweep.split("=", 1)
    module_name, attribute = name.rsplit(".", 1)
    module = importlib.import_module(module_name)
    configured = getattr(module, attribute)
    for value in values.split(","):
        setattr(module, attribute, type(configured)(value))
        print(f"\n{name} = {value} (configured {configured})")
        table(workspaces, args)
    setattr(module, attribute, configured)


def table(workspaces: dict[str, tuple[Any, dict[str, str]]], args: argparse.Namespace) -> None:
    from bench.parallel_docs.corpus import FAMILIES, half
    from bench.parallel_docs.fresh import FRESH

    totals: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    halves = [(family, half(index)) for index, family in enumerate(FAMILIES)] + [(f, "fresh") for f in FRESH]
    print(f"{'family':<26}{'half':<6}" + "".join(f"{c:>21}" for c in COLUMNS))
    for family, part in halves:
        if (args.family and family.key != args.family) or (args.half and part != args.half):
            continue
        if args.verbose:
            print(family.key)
        figures = measure_family(family, *workspaces[family.key], args.verbose)
        for name, values in figures.items():
            totals[part][name] += values
        row = "".join(f"{_mean(figures[c]):>21}" for c in COLUMNS)
        print(f"{family.key:<26}{part:<6}{row}", flush=True)
    for name, figures in totals.items():
        row = "".join(f"{_mean(figures[c]):>21}" for c in COLUMNS)
        print(f"{'all':<26}{name:<6}{row}   p95 {_p95(figures['seconds']) * 1000:.0f} ms")


def _mean(values: Sequence[float]) -> str:
    return f"{sum(values) / len(values):.2f} ({len(values)})" if values else "-"


def _p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else float("nan")


if __name__ == "__main__":
    main()
