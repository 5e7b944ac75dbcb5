#!/usr/bin/env python
"""Answer quality on SciFact: claims as questions, through the chat service.

    .venv/bin/python bench/answer_quality.py                       # extractive, all 809 claims
    .venv/bin/python bench/answer_quality.py --models extractive,smollm2-135m-instruct --limit 100
    .venv/bin/python bench/answer_quality.py --models vllm --openai-base-url http://127.0.0.1:8000/v1 \\
        --openai-model DIR --limit 100

Each SciFact train claim is sent as a chat message (``turn_prepare`` +
``turn_complete``, what ``POST …/chat/`` runs) to a workspace holding the
5,183 abstracts, one ready resource each (``bench/scifact.py``), in the
database ``daneshyar_bench_answers``. Per model:

- first cited relevant: answers whose first cited part comes from a relevant
  abstract (the qrels), over all answers;
- cited parts relevant: cited parts from a relevant abstract, over all cited
  parts;
- no citation: answers without any cited part;
- p50 / p95 seconds per turn (retrieval + answer + storing it).

Turns the model did not answer itself are counted apart and left out of the
shares: ``degraded`` (generation unavailable, e.g. the local model timed
out, so the extractive engine answered) and ``fallback`` (no valid reply
after the retry). ``turns`` counts all of them.

``extractive-meaning`` is the extractive engine without the shared-words
term (how the weights were chosen). The claims are read in place from
``../shared/datasets/scifact``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django, scifact


@dataclass
class Tally:
    answers: int = 0
    first_relevant: int = 0
    cited_parts: int = 0
    relevant_parts: int = 0
    uncited: int = 0
    # Turns the model itself did not answer: generation unavailable, so the
    # extractive engine answered (degraded), or an invalid reply twice
    # (fallback). They are left out of the three shares above.
    degraded: int = 0
    fallback: int = 0
    seconds: list[float] = field(default_factory=list)

    def row(self, name: str) -> str:
        ordered = sorted(self.seconds)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        own = max(self.answers, 1)
        return (
            f"{name:28s} {self.answers + self.degraded + self.fallback:5d}  {self.degraded:8d}  "
            f"{self.fallback:8d}  {self.first_relevant / own:8.3f}  "
            f"{self.relevant_parts / max(self.cited_parts, 1):8.3f}  {self.uncited / own:8.3f}  "
            f"{statistics.median(ordered):7.3f}  {p95:7.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", default="extractive,extractive-meaning", help="comma-separated")
    parser.add_argument("--limit", type=int, default=0, help="first N claims (default: all 809)")
    parser.add_argument("--openai-base-url", default="", help="a running vLLM for the model 'vllm'")
    parser.add_argument("--openai-model", default="", help="the model id that server serves")
    args = parser.parse_args()

    _django.setup("answers")
    from django.conf import settings

    from chat import answerability as engine  # the weights of a sentence's score
    from chat.services.turn import turn_complete, turn_prepare
    from workspaces import services as tenancy
    from workspaces.models import ApiKeyScope

    data = scifact.load()
    workspace = scifact.load_workspace(data, scifact.embeddings(data))
    doc_of = dict(workspace.resources.values_list("id", "filename"))
    claims = list(data.queries.items())[: args.limit or None]
    key = tenancy.api_key_create(
        organization=workspace.organization, name="bench", scope=ApiKeyScope.ADMIN
    ).api_key
    if args.openai_base_url:
        # The registry id is the model name sent to the server; it replaces a
        # local entry of the same name for this run.
        settings.GENERATION_MODELS = [
            *(m for m in settings.GENERATION_MODELS if m["id"] != args.openai_model),
            {"id": args.openai_model, "backend": "openai", "default": False, "context_length": None},
        ]
        settings.OPENAI_BASE_URL = args.openai_base_url

    print(f"{len(claims)} claims over {len(doc_of)} abstracts")
    columns = ("degraded", "fallback", "1st-rel", "part-rel", "uncited")
    print(f"{'model':28s} {'turns':>5s}  " + "  ".join(f"{c:>8s}" for c in columns) + "    p50 s    p95 s")
    try:
        for name in args.models.split(","):
            model, weights = _variant(name, engine)
            if name == "vllm":
                model = args.openai_model
            saved = {attr: getattr(engine, attr) for attr in weights}
            for attr, value in weights.items():
                setattr(engine, attr, value)
            try:
                tally = _run(model, claims, data.qrels, doc_of, workspace, key, turn_prepare, turn_complete)
            finally:
                for attr, value in saved.items():
                    setattr(engine, attr, value)
            print(tally.row(name), flush=True)
    finally:
        workspace.sessions.all().delete()
        key.delete()


def _variant(name: str, engine: Any) -> tuple[str, dict[str, float]]:
    if name == "extractive-meaning":
        return "extractive", {
            "WORDS_WEIGHT": 0.0,
            "MEANING_WEIGHT": engine.MEANING_WEIGHT + engine.WORDS_WEIGHT,
        }
    return name, {}


def _run(
    model: str,
    claims: list[tuple[str, str]],
    qrels: dict[str, set[str]],
    doc_of: dict[Any, str],
    workspace: Any,
    key: Any,
    turn_prepare: Any,
    turn_complete: Any,
) -> Tally:
    from chat.message_list import Conversation
    from chat.services.turn import TurnRequest

    tally = Tally()
    for query_id, claim in claims:
        started = time.perf_counter()
        prepared = turn_prepare(
            TurnRequest(
                principal=key,
                workspace=workspace,
                external_user_id=f"bench-{model}",
                conversation=Conversation.single(claim),
                model=model,
            )
        )
        reply = turn_complete(prepared)
        tally.seconds.append(time.perf_counter() - started)
        if reply.degraded or reply.is_fallback:
            tally.degraded += reply.degraded
            tally.fallback += reply.is_fallback and not reply.degraded
            continue
        relevant = qrels[query_id]
        cited = [p["source"] for p in reply.reply["parts"] if p["source"] is not None] if reply.reply else []
        tally.answers += 1
        tally.uncited += not cited
        tally.cited_parts += len(cited)
        hits = [doc_of.get(_uuid(s["resource_id"])) in relevant for s in cited]
        tally.relevant_parts += sum(hits)
        tally.first_relevant += bool(hits and hits[0])
    return tally


def _uuid(value: str) -> Any:
    import uuid

    return uuid.UUID(value)


if __name__ == "__main__":
    main()
