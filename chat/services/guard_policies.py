"""A workspace's output guard (chat/output_guard.py): its rules and policy, read
for every turn and replaced as a whole by ``PUT …/guard-rules/``; and the
review of the replies it caught."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from chat.models import GuardPolicy, GuardRule, Message, ReviewStatus
from chat.output_guard import (
    DEFAULT_SAFE_REPLY,
    MAX_CLAIMS,
    MAX_RULES,
    InvalidPattern,
    Policy,
    Rule,
    pattern_compile,
)
from daneshyar.exceptions import ValidationFailed
from workspaces.models import Workspace

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RuleInput:
    pattern: str
    applies_to: str
    action: str
    id: uuid.UUID | None = None


def _rules_compile(workspace: Workspace) -> tuple[Rule, ...]:
    rules = []
    for stored in GuardRule.objects.filter(workspace=workspace).order_by("position"):
        try:
            pattern = pattern_compile(stored.pattern)
        except InvalidPattern as exc:
            # Saved before rules ran on RE2 (a backreference or lookaround):
            # left out rather than counted as a match on every reply; the
            # next PUT of the rules names it.
            logger.warning("guard rule %s of workspace %s is skipped: %s", stored.id, workspace.id, exc)
            continue
        rules.append(
            Rule(id=str(stored.id), pattern=pattern, applies_to=stored.applies_to, action=stored.action)
        )
    return tuple(rules)


def guard_policy_load(*, workspace: Workspace) -> Policy:
    """The workspace's guard, compiled (two indexed queries; none when it has no rules).
    A stored rule RE2 cannot run is skipped with a logged warning."""
    rules = _rules_compile(workspace)
    policy = GuardPolicy.objects.filter(workspace=workspace).first()
    if policy is None:
        return Policy(rules=rules)
    # GET shows the built-in safe reply in English; one PUT back as it was
    # read is still the built-in one, given in the question's language.
    own = "" if policy.safe_reply == DEFAULT_SAFE_REPLY else policy.safe_reply
    return Policy(rules=rules, safe_reply=own, claims=tuple(policy.claims))


def guard_data(*, workspace: Workspace) -> dict[str, Any]:
    """``GET …/guard-rules/``."""
    policy = GuardPolicy.objects.filter(workspace=workspace).first()
    return {
        "rules": list(GuardRule.objects.filter(workspace=workspace).order_by("position")),
        "safe_reply": (policy.safe_reply if policy else "") or DEFAULT_SAFE_REPLY,
        "claims": list(policy.claims) if policy else [],
    }


def guard_replace(
    *,
    workspace: Workspace,
    rules: Sequence[RuleInput],
    safe_reply: str | None = None,
    claims: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Replace the workspace's rules (in order) and, when given, its safe
    reply and claims checks. A rule sent with the ``id`` of an existing rule
    keeps that id (replies that named it still do); every pattern is
    validated before anything is written."""
    if len(rules) > MAX_RULES:
        raise ValidationFailed("Too many rules.", fields={"rules": [f"At most {MAX_RULES} rules."]})
    errors: dict[str, list[str]] = {}
    for index, rule in enumerate(rules):
        try:
            pattern_compile(rule.pattern)
        except InvalidPattern as exc:
            errors[f"rules[{index}].pattern"] = [str(exc)]
    if claims is not None and len(claims) > MAX_CLAIMS:
        errors["claims"] = [f"At most {MAX_CLAIMS} claims checks."]
    if errors:
        raise ValidationFailed("The guard rules are invalid.", fields=errors)
    with transaction.atomic():
        existing = {r.id: r for r in GuardRule.objects.select_for_update().filter(workspace=workspace)}
        kept = {rule.id for rule in rules if rule.id in existing}
        GuardRule.objects.filter(workspace=workspace).exclude(id__in=kept).delete()
        # Positions are unique: move the kept rules out of the way first.
        GuardRule.objects.filter(workspace=workspace).update(position=F("position") + 1000)
        for position, rule in enumerate(rules):
            values = {
                "position": position,
                "pattern": rule.pattern,
                "applies_to": rule.applies_to,
                "action": rule.action,
            }
            if rule.id in existing:
                GuardRule.objects.filter(id=rule.id).update(**values, updated_at=timezone.now())
            else:
                GuardRule.objects.create(workspace=workspace, **values)
        if safe_reply is not None or claims is not None:
            policy, _ = GuardPolicy.objects.get_or_create(workspace=workspace)
            if safe_reply is not None:
                policy.safe_reply = safe_reply
            if claims is not None:
                policy.claims = list(claims)
            policy.save()
    return guard_data(workspace=workspace)


def review_mark(*, message_ids: Sequence[uuid.UUID], reviewer: str) -> int:
    """Mark caught replies reviewed; how many changed."""
    return Message.objects.filter(id__in=message_ids, review_status=ReviewStatus.PENDING).update(
        review_status=ReviewStatus.REVIEWED, reviewed_at=timezone.now(), reviewed_by=reviewer[:150]
    )
