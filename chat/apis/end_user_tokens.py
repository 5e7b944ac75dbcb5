"""``POST …/end-user-tokens/``: an admin key mints a token for one end user
(workspaces/tokens.py). Here rather than in workspaces because it checks the
named resources."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from chat.serializers import ExternalUserIdField
from daneshyar.api import UUIDField, ok
from daneshyar.schema import envelope
from retrieval.filter_grammar import groups_parse
from retrieval.search import named_resources_validate
from retrieval.serializers import GroupsField
from workspaces import tokens
from workspaces.access import WorkspaceApi
from workspaces.idempotency import idempotent


class EndUserTokenApi(WorkspaceApi):
    admin_methods = frozenset({"POST"})

    class InputSerializer(serializers.Serializer[Any]):
        external_user_id = ExternalUserIdField(trim_whitespace=False)
        ttl_seconds = serializers.IntegerField(
            required=False,
            min_value=1,
            max_value=tokens.MAX_TTL_SECONDS,
            default=tokens.DEFAULT_TTL_SECONDS,
            help_text="The token's lifetime in seconds (default 900, at most 3600).",
        )
        resource_ids = serializers.ListField(
            child=UUIDField(),
            required=False,
            min_length=1,
            max_length=tokens.MAX_RESOURCE_IDS,
            help_text="Retrieval for this end user's turns only from these resources of the workspace.",
        )
        groups = GroupsField(
            help_text="The end user's groups (at most 64 strings of 1 to 128 characters): the user reads "
            "only documents whose access is open or names one of them. Omitted: no groups (open documents "
            "only)."
        )

        class Meta:
            ref_name = "EndUserTokenInput"

    class OutputSerializer(serializers.Serializer[Any]):
        token = serializers.CharField(
            help_text="Send as Authorization: Bearer <token> on the end-user routes of this workspace."
        )
        expires_at = serializers.DateTimeField()

        class Meta:
            ref_name = "EndUserToken"

    @extend_schema(
        operation_id="end_user_tokens_create",
        summary="Mint an end-user token",
        description=(
            "A short-lived token (JWT, HS256, signed with the workspace's signing secret) that lets a "
            "browser act for one end user on the end-user routes (chat, stream, that user's sessions "
            "and messages, feedback, models) with `Authorization: Bearer`. `ttl_seconds` at most "
            "3600 (default 900); `resource_ids` narrow what this user's turns retrieve; `groups` are the "
            "user's (documents whose `access` names none of them are not read). Admin keys only."
        ),
        tags=["End-user tokens"],
        request=InputSerializer,
        responses={201: envelope("EndUserTokenCreated", OutputSerializer)},
    )
    @idempotent
    def post(self, request: Request, workspace_id: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        resource_ids = named_resources_validate(
            workspace=self.workspace, resource_ids=data.get("resource_ids", [])
        )
        minted = tokens.end_user_token_mint(
            workspace=self.workspace,
            external_user_id=data["external_user_id"],
            ttl_seconds=data["ttl_seconds"],
            resource_ids=resource_ids,
            groups=groups_parse(data["groups"]) if data.get("groups") is not None else None,
        )
        return ok(
            self.OutputSerializer({"token": minted.token, "expires_at": minted.expires_at}).data, status=201
        )
