"""Output guard: rules in code on every reply (seed 000, "Manipulation: roles
are not enough", layer 3) and claims checks (layer 2).

A workspace's rules are an ordered list of ``{pattern, applies_to, action}``:
``pattern`` is a regular expression in RE2's syntax (``google-re2``: matching
takes time linear in the reply, whatever the pattern, so no rule can make a
turn slow; backreferences and lookaround, which need backtracking, are
refused when the rules are saved), ``applies_to`` says which replies it reads (answers, forms or both;
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

from collections.abc import Sequence
from dataclasses import dataclass

import re2

from chat.contract import GuardData, Reply, ResponseType
from languages import ENGLISH

MAX_RULES = 50
MAX_PATTERN_CHARS = 500
MAX_CLAIMS = 10
# RE2 compiles a pattern into an automaton within this much memory; a
# pattern that needs more (huge counted repetitions) is refused when saved.
MAX_PATTERN_MEMORY = 8 << 20
# The English safe reply; a workspace without its own gets the turn's
# language's (languages/<code>/texts.py: ``safe_reply``).
DEFAULT_SAFE_REPLY = ENGLISH.texts.safe_reply


class InvalidPattern(ValueError):
    pass


@dataclass(frozen=True)
class Rule:
    id: str
    pattern: re2._Regexp[str]
    applies_to: str  # "answer" | "form" | "both"
    action: str  # "flag" | "block"


@dataclass(frozen=True)
class Policy:
    rules: tuple[Rule, ...] = ()
    # The workspace's own safe reply; empty: the built-in one of the turn's language.
    safe_reply: str = ""
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

    def as_json(self) -> GuardData:
        """As a reply stores and shows it (``Message.guard``, the API's ``guard``)."""
        return {"action": self.action, "rule_ids": list(self.rule_ids)}


def _options() -> re2.Options:
    options = re2.Options()
    options.max_mem = MAX_PATTERN_MEMORY
    options.log_errors = False  # a refused pattern is the caller's 400, not a log line
    return options


def pattern_compile(pattern: str) -> re2._Regexp[str]:
    """Compile a rule's pattern with RE2, refusing what it cannot run in
    linear time (backreferences, lookaround, atomic groups) or at all."""
    if not pattern or len(pattern) > MAX_PATTERN_CHARS:
        raise InvalidPattern(f"A pattern has 1 to {MAX_PATTERN_CHARS} characters.")
    try:
        return re2.compile(pattern, _options())
    except re2.error as exc:
        reason = exc.args[0] if exc.args else ""
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise InvalidPattern(
            f"Not a regular expression the guard can run ({reason or 'invalid'}): use RE2 syntax, "
            "without backreferences or lookaround."
        ) from None


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
        if rule.pattern.search(text) is not None:
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
