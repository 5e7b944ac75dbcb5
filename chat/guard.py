"""Output guard: rules in code on every reply (seed 000, "Manipulation: roles
are not enough", layer 3) and claims checks (layer 2).

A workspace's rules are an ordered list of ``{pattern, applies_to, action}``:
``pattern`` is a regular expression (the ``regex`` engine, each match bounded
in time), ``applies_to`` says which replies it reads (answers, forms or both;
a form is read with its title, labels, options and placeholders), and
``action`` is ``flag`` (the reply is returned and queued for review) or
``block`` (the workspace's safe reply is returned instead; the original is
kept for review). Every rule is evaluated; the reply's ``guard`` lists every
rule that matched, and the action is ``block`` when any of them blocks.

A claims check is a yes/no statement about what the *user* claims ("the user
claims their claim is approved"); a generative model answers each in the
same structured reply, and a "yes" flags the turn for review.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import regex

from chat.contract import Reply, ResponseType

logger = logging.getLogger(__name__)

MAX_RULES = 50
MAX_PATTERN_CHARS = 500
MAX_CLAIMS = 10
# Seconds one rule may take on one reply; a rule that runs over counts as a
# match (it flags, or blocks if it is a blocking rule): a guard fails closed.
MATCH_TIMEOUT = 0.05
# What a pattern must survive when it is saved (catastrophic backtracking).
_PROBES = ("a" * 5000 + "!", "ab " * 3000 + "!", "\n".join(["x" * 80] * 100))
DEFAULT_SAFE_REPLY = (
    "I can't give that answer here. Your question has been passed to a person who will follow up."
)


class InvalidPattern(ValueError):
    pass


@dataclass(frozen=True)
class Rule:
    id: str
    pattern: regex.Pattern[str]
    applies_to: str  # "answer" | "form" | "both"
    action: str  # "flag" | "block"


@dataclass(frozen=True)
class Policy:
    rules: tuple[Rule, ...] = ()
    safe_reply: str = DEFAULT_SAFE_REPLY
    claims: tuple[str, ...] = ()

    @property
    def blocks(self) -> bool:
        """Whether a reply may be replaced: then a stream holds its text back until it is checked."""
        return any(rule.action == "block" for rule in self.rules)

    @property
    def empty(self) -> bool:
        return not self.rules and not self.claims


@dataclass(frozen=True)
class Verdict:
    action: str
    rule_ids: list[str]

    def as_json(self) -> dict[str, Any]:
        return {"action": self.action, "rule_ids": self.rule_ids}


def pattern_compile(pattern: str) -> regex.Pattern[str]:
    """Compile a rule's pattern, refusing what is not a usable, bounded regex."""
    if not pattern or len(pattern) > MAX_PATTERN_CHARS:
        raise InvalidPattern(f"A pattern has 1 to {MAX_PATTERN_CHARS} characters.")
    try:
        compiled = regex.compile(pattern)
    except regex.error as exc:
        raise InvalidPattern(f"Not a valid regular expression: {exc}.") from None
    for probe in _PROBES:
        try:
            compiled.search(probe, timeout=MATCH_TIMEOUT)
        except TimeoutError:
            raise InvalidPattern(
                "The pattern is too slow on long texts (catastrophic backtracking); simplify it."
            ) from None
    return compiled


def reply_text(reply: Reply) -> str:
    """What a rule reads: an answer's parts, or a form's question, title,
    labels, options and placeholders, one per line."""
    lines = [part["text"] for part in reply["parts"]]
    form = reply["form"]
    if form is not None:
        lines.append(form["title"])
        for field in form["fields"]:
            lines.append(field["label"])
            lines.extend(field.get("options", []))
            if "placeholder" in field:
                lines.append(field["placeholder"])
    return "\n".join(lines)


def evaluate(policy: Policy, reply: Reply, claims: Sequence[bool] = ()) -> Verdict | None:
    """The guard's verdict on ``reply`` (None when nothing matched).

    ``claims`` are the model's answers to the policy's claims checks, in
    order; a true one adds ``claim:<n>`` (1-based) to the rule ids.
    """
    kind = "form" if reply["type"] == ResponseType.FORM else "answer"
    text = reply_text(reply)
    matched: list[Rule] = []
    for rule in policy.rules:
        if rule.applies_to not in (kind, "both"):
            continue
        try:
            hit = rule.pattern.search(text, timeout=MATCH_TIMEOUT) is not None
        except TimeoutError:
            logger.warning("guard rule %s timed out; counted as a match", rule.id)
            hit = True
        if hit:
            matched.append(rule)
    ids = [rule.id for rule in matched]
    ids += [f"claim:{n}" for n, yes in enumerate(claims, start=1) if yes is True]
    if not ids:
        return None
    action = "block" if any(rule.action == "block" for rule in matched) else "flag"
    return Verdict(action=action, rule_ids=ids)


def claims_instruction(claims: Sequence[str]) -> str:
    """The system-message paragraph that asks the model the claims checks."""
    lines = "\n".join(f"{n}. {claim}" for n, claim in enumerate(claims, start=1))
    return (
        'Also fill "claims": a list with one true or false per statement below, in order. Answer '
        "whether the USER claims or asserts it in this conversation — not whether it is true.\n" + lines
    )
