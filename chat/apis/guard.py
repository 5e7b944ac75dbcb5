"""The workspace's output guard: its rules, safe reply and claims checks (admin keys)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from chat.models import GuardAction, GuardRule, GuardScope
from chat.output_guard import MAX_CLAIMS, MAX_PATTERN_CHARS, MAX_RULES
from chat.services import guard_policies
from daneshyar.api import StringField, UUIDField, ok
from daneshyar.exceptions import ValidationFailed
from daneshyar.schema import envelope
from workspaces.access import WorkspaceApi


class GuardRuleOutputSerializer(serializers.ModelSerializer[GuardRule]):
    class Meta:
        model = GuardRule
        fields = ["id", "position", "pattern", "applies_to", "action", "created_at", "updated_at"]
        ref_name = "GuardRule"


class GuardOutputSerializer(serializers.Serializer[Any]):
    rules = GuardRuleOutputSerializer(many=True, help_text="In order; every rule is evaluated.")
    safe_reply = serializers.CharField(
        help_text="What a blocked reply is replaced with: the workspace's own, or while it has none the "
        "built-in one, shown here in English and given in the question's language (en, fa, ar, de, fr)."
    )
    claims = serializers.ListField(
        child=serializers.CharField(),
        help_text="Yes/no statements about what the user claims; a generative model answers them with "
        "every reply, and a yes flags the reply for review.",
    )

    class Meta:
        ref_name = "GuardPolicy"


class GuardRulesApi(WorkspaceApi):
    """``GET/PUT …/guard-rules/``: the workspace's output guard (admin keys)."""

    admin_methods = frozenset({"GET", "PUT"})

    class RuleSerializer(serializers.Serializer[Any]):
        id = UUIDField(required=False, help_text="Keep an existing rule's id.")
        pattern = StringField(
            max_length=MAX_PATTERN_CHARS,
            trim_whitespace=False,
            help_text="A regular expression, searched in the reply's text (time-bounded).",
        )
        applies_to = serializers.ChoiceField(choices=GuardScope.choices, default=GuardScope.BOTH)
        action = serializers.ChoiceField(choices=GuardAction.choices, default=GuardAction.FLAG)

        class Meta:
            ref_name = "GuardRuleInput"

    class InputSerializer(serializers.Serializer[Any]):
        rules = serializers.ListField(child=serializers.DictField(), max_length=MAX_RULES)
        safe_reply = StringField(
            required=False,
            allow_blank=True,
            max_length=2000,
            help_text="The workspace's own safe reply, given whatever the question's language; empty: "
            "the built-in one, in the question's language.",
        )
        claims = serializers.ListField(
            child=StringField(max_length=300), required=False, max_length=MAX_CLAIMS
        )

        class Meta:
            ref_name = "GuardPolicyInput"

    @extend_schema(
        operation_id="guard_rules_get",
        summary="Get the output guard",
        description=(
            "The workspace's output guard (admin keys): its ordered rules (a pattern, what it applies"
            " to, flag or block), the safe reply that replaces a blocked one, and the claims checks."
        ),
        tags=["Guard"],
        responses=envelope("GuardRules", GuardOutputSerializer),
    )
    def get(self, request: Request, workspace_id: str) -> Response:
        return ok(GuardOutputSerializer(guard_policies.guard_data(workspace=self.workspace)).data)

    @extend_schema(
        operation_id="guard_rules_replace",
        summary="Replace the output guard",
        description=(
            "Replace the whole guard (admin keys). Each pattern is validated when saved: one that "
            "does not compile or backtracks catastrophically is a 400 naming `rules[i].pattern`. A "
            "rule sent with an existing `id` keeps it."
        ),
        tags=["Guard"],
        request=inline_serializer(
            "GuardPolicyReplace",
            {
                "rules": RuleSerializer(many=True),
                "safe_reply": serializers.CharField(required=False, allow_blank=True),
                "claims": serializers.ListField(child=serializers.CharField(), required=False),
            },
        ),
        responses=envelope("GuardRulesReplaced", GuardOutputSerializer),
    )
    def put(self, request: Request, workspace_id: str) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        rules = []
        errors: dict[str, list[str]] = {}
        for index, raw in enumerate(body.validated_data["rules"]):
            rule = self.RuleSerializer(data=raw)
            if not rule.is_valid():
                for name, problems in rule.errors.items():
                    errors[f"rules[{index}].{name}"] = [str(p) for p in problems]
                continue
            rules.append(guard_policies.RuleInput(**rule.validated_data))
        if errors:
            raise ValidationFailed("The guard rules are invalid.", fields=errors)
        data = guard_policies.guard_replace(
            workspace=self.workspace,
            rules=rules,
            safe_reply=body.validated_data.get("safe_reply"),
            claims=body.validated_data.get("claims"),
        )
        return ok(GuardOutputSerializer(data).data)
