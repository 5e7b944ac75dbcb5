"""An optional judge: a generative model of the registry reads each item's
question, the expected answer (when the item has one) and the reply, and
says whether the reply is right. Its verdicts are a model's opinion, not a
measurement: they are stored apart from the deterministic scores (a
result's ``judge_verdict``, the run's ``metrics.judge`` naming the model),
never enter ``outcome_right`` or the regressions a comparison flags, and a
judge that fails or answers out of its schema leaves the item unjudged
(``judge_verdict`` empty) instead of failing the run.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any, Protocol

from chat.backends import BaseGenerativeBackend, ChatMessage, get_backend, resolve_model
from daneshyar.exceptions import ApplicationError, ValidationFailed

logger = logging.getLogger(__name__)

VERDICTS = ("correct", "partly_correct", "incorrect")
JUDGE_MAX_TOKENS = 96
JUDGE_TEXT_CHARS = 2000
JUDGE_SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": list(VERDICTS)},
        "reason": {"type": "string", "maxLength": 200},
    },
    "required": ["verdict", "reason"],
    "additionalProperties": False,
}
JUDGE_INSTRUCTIONS = (
    "You grade a support assistant's reply. Read the question, the expected answer (when given) "
    "and the reply. The verdict is correct when the reply answers the question as the expected "
    "answer does (or, without one, answers it plausibly and on topic), partly_correct when it "
    "answers only part of it, incorrect otherwise. When the expected answer says the documents "
    "do not say, a reply that says so is correct. "
    'Reply with JSON: {"verdict": "correct" | "partly_correct" | "incorrect", "reason": "..."}.'
)
EXPECTED_NO_ANSWER = "The documents do not answer this question; the reply should say so."
EXPECTED_ASK_BACK = "The question is ambiguous; the reply should ask which one the user means."


def judge_backend(model: str) -> BaseGenerativeBackend:
    """The judge for ``model``, a generative model of GET /models/ (400 for
    an unknown one, or the extractive engine, which cannot read a reply)."""
    try:
        resolve_model(model)
    except ValidationFailed as exc:
        reasons = (exc.fields or {}).get("model", [])
        raise ValidationFailed(exc.message, fields={"judge_model": reasons}) from None
    backend = get_backend(model)
    if not backend.generative:
        raise ValidationFailed(
            "The judge must be a generative model.",
            fields={"judge_model": [f"{model!r} copies sentences; it cannot judge a reply."]},
        )
    return backend


class Judged(Protocol):
    judge_verdict: str


def judge_messages(
    *, question: str, reply: str, expected_answer: str, expected_outcome: str
) -> list[ChatMessage]:
    expected = expected_answer.strip() or {
        "no_answer": EXPECTED_NO_ANSWER,
        "ask_back": EXPECTED_ASK_BACK,
    }.get(expected_outcome, "")
    parts = [f"Question: {question[:JUDGE_TEXT_CHARS]}"]
    if expected:
        parts.append(f"Expected answer: {expected[:JUDGE_TEXT_CHARS]}")
    parts.append(f"Reply: {reply[:JUDGE_TEXT_CHARS]}")
    return [
        {"role": "system", "content": JUDGE_INSTRUCTIONS},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


def reply_judge(
    backend: BaseGenerativeBackend, *, question: str, reply: str, expected_answer: str, expected_outcome: str
) -> tuple[str, str]:
    """(verdict, reason); ("", why) when the judge failed or answered out of its schema."""
    messages = judge_messages(
        question=question, reply=reply, expected_answer=expected_answer, expected_outcome=expected_outcome
    )
    try:
        generation = backend.generate(
            messages, schema=JUDGE_SCHEMA, max_tokens=JUDGE_MAX_TOKENS, temperature=0.0
        )
    except ApplicationError as exc:
        logger.info("Judge unavailable: %s", exc.message)
        return "", f"[{exc.code}] {exc.message}"[:200]
    try:
        parsed: Any = json.loads(generation.text)
        verdict, reason = parsed["verdict"], str(parsed.get("reason", ""))
    except (ValueError, KeyError, TypeError):
        return "", "The judge's reply was not the JSON asked for."
    if verdict not in VERDICTS:
        return "", f"The judge's verdict {verdict!r} is not one of {', '.join(VERDICTS)}."
    return str(verdict), reason[:200]


def judge_metrics(model: str, results: Sequence[Judged]) -> dict[str, Any]:
    """The run's ``metrics.judge``: the model, how many items it judged, and
    each verdict's share of those."""
    judged = [r.judge_verdict for r in results if r.judge_verdict]
    return {
        "model": model,
        "kind": "a generative model's opinion, not a deterministic metric",
        "judged": len(judged),
        "unjudged": len(results) - len(judged),
        **{v: round(judged.count(v) / len(judged), 4) if judged else None for v in VERDICTS},
    }
