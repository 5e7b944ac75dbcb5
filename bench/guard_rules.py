#!/usr/bin/env python
"""Output guard rules on RE2: a chat turn with 50 hostile rules beside one with none.

    .venv/bin/python bench/guard_rules.py [--turns 30] [--reply-words 400]

The rules are 49 copies of ``(?:[^abx!\\n]|[^abx!\\n])+\\d{3}`` (with a
backtracking engine, exponential on text without three digits in a row) and
one ``(q|qq)+z``. Two workspaces, one without rules and one with the 50,
take turns alternately. Each turn is a whole ``POST …/chat/`` through Django's test
client on the bench database ``daneshyar_bench_guard`` (authentication,
validation, storing the question, retrieval on an empty workspace, the guard,
storing the reply); generation is the scripted backend (a stand-in for a
generative model) answering an ordinary English reply of ``--reply-words``
words at once. Printed: the median and slowest turn with no rules and with the
50 rules, whether any turn was flagged, and the guard's own evaluation of the
reply (``chat.output_guard.evaluate``) alone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _django

_django.setup("guard")

from django.conf import settings  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from chat import output_guard as guard  # noqa: E402
from chat.backends import use_backend  # noqa: E402
from chat.backends.scripted import ScriptedBackend  # noqa: E402
from chat.contract import ResponseType  # noqa: E402
from workspaces import services  # noqa: E402
from workspaces.models import ApiKeyScope, Organization, Workspace  # noqa: E402

HOSTILE = [r"(?:[^abx!\n]|[^abx!\n])+\d{3}"] * 49 + [r"(q|qq)+z"]
SENTENCE = (
    "Refunds are paid back to the original payment method within fourteen days of the return "
    "being received, and you will get an e-mail when it is done"
)


def reply_text(words: int) -> str:
    base = SENTENCE.split()
    return " ".join(base[i % len(base)] for i in range(words)) + "."


def turn(
    client: APIClient, workspace: Workspace, backend: ScriptedBackend, body: str, n: int
) -> tuple[float, bool]:
    """One turn's wall time, and whether the guard caught it."""
    backend.replies = [body]
    started = time.perf_counter()
    response = client.post(
        f"/api/v1/workspaces/{workspace.id}/chat/",
        {"external_user_id": f"bench-{n}", "message": "When is my refund paid?"},
        format="json",
    )
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, response.content[:300]
    return elapsed, response.json()["data"]["assistant_message"]["guard"] is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--reply-words", type=int, default=400)
    args = parser.parse_args()
    settings.RATE_LIMIT_ENABLED = False
    settings.ALLOWED_HOSTS = ["*"]
    settings.GENERATION_MODELS = [
        {"id": "scripted", "backend": "local", "default": True, "context_length": None},
        {"id": "extractive", "backend": "extractive", "default": False, "context_length": None},
    ]
    organization, _ = Organization.objects.get_or_create(name="guard bench")
    key = services.api_key_create(organization=organization, name="bench", scope=ApiKeyScope.ADMIN)
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=key.plaintext)
    # Two workspaces, one without rules and one with the 50; their turns
    # alternate, so a load change on the machine weighs on both alike.
    cases = {}
    for label, patterns in (("no rules", []), ("50 hostile rules", HOSTILE)):
        workspace, _ = Workspace.objects.get_or_create(
            organization=organization, name=f"guard bench: {label}"
        )
        saved = client.put(
            f"/api/v1/workspaces/{workspace.id}/guard-rules/",
            {"rules": [{"pattern": p} for p in patterns]},
            format="json",
        )
        assert saved.status_code == 200, saved.content[:300]
        cases[label] = workspace
    text = reply_text(args.reply_words)
    body = json.dumps({"type": "answer", "parts": [{"text": text, "passage": None}]})
    print(f"reply: {len(text)} characters; {args.turns} turns per case, alternating")
    times: dict[str, list[float]] = {label: [] for label in cases}
    flagged = dict.fromkeys(cases, 0)
    with use_backend(ScriptedBackend(model_id="scripted")) as backend:
        assert isinstance(backend, ScriptedBackend)
        for n in range(5):  # warm-up (embedding model, caches)
            for workspace in cases.values():
                turn(client, workspace, backend, body, n)
        for n in range(args.turns):
            for label, workspace in cases.items():
                elapsed, caught = turn(client, workspace, backend, body, n)
                times[label].append(elapsed)
                flagged[label] += caught
    for label in cases:
        print(
            f"{label:>17}: turn median {statistics.median(times[label]) * 1000:7.1f} ms, "
            f"slowest {max(times[label]) * 1000:7.1f} ms, flagged {flagged[label]}/{args.turns}"
        )
    compiled = tuple(
        guard.Rule(id=str(n), pattern=guard.pattern_compile(p), applies_to="both", action="flag")
        for n, p in enumerate(HOSTILE)
    )
    reply = {"type": ResponseType.ANSWER, "parts": [{"text": text, "source": None}], "form": None}
    started = time.perf_counter()
    for _ in range(100):
        guard.evaluate(guard.Policy(rules=compiled), reply)  # type: ignore[arg-type]
    print(f"guard.evaluate alone, 50 rules: {(time.perf_counter() - started) * 10:.3f} ms per reply")


if __name__ == "__main__":
    main()
