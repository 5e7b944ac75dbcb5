from __future__ import annotations

import math
from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from daneshyar.api import StringField, ok
from daneshyar.exceptions import Forbidden
from daneshyar.schema import envelope
from daneshyar.views import DetailMixin, ListCreateMixin, Operation
from languages.texts import MAX_TEXT_CHARS, TEXT_KEYS, text_languages
from workspaces import selectors, services, tokens
from workspaces.access import WorkspaceApi, WorkspaceGenericApi, request_api_key
from workspaces.idempotency import idempotent
from workspaces.metadata_keys import metadata_keys_problems
from workspaces.models import ApiKey, GenerationFallback, Workspace
from workspaces.origins import MAX_ORIGINS, ORIGIN_MAX_LENGTH, origins_normalize
from workspaces.permissions import IsAdminKey


class _ClosedSerializer(serializers.Serializer[Any]):
    """An object whose keys are its fields: an unknown key is a 400 naming it."""

    unknown_message = "Unknown key."

    def to_internal_value(self, data: Any) -> Any:
        # Raised here, a problem is reported on the object's own path
        # (texts.fa), not on DRF's texts.fa.non_field_errors.
        if not isinstance(data, dict):
            raise serializers.ValidationError(["Expected an object."])
        unknown = {key: [self.unknown_message] for key in data if key not in self.fields}
        if unknown:
            raise serializers.ValidationError(unknown)
        return super().to_internal_value(data)


_TEXT_HELP = {
    "no_answer_text": "The reply when the documents do not answer the question.",
    "small_talk_text": "The reply to small talk (a greeting, thanks, a goodbye).",
    "no_documents_text": "The reply while the workspace has no ready documents (extractive engine).",
    "which_one": 'The question of the "which one do you mean?" form, and its field\'s label.',
    "form_title": 'The title of the "which one do you mean?" form.',
}


class LanguageTextsSerializer(_ClosedSerializer):
    unknown_message = f"Unknown text; one of {', '.join(TEXT_KEYS)}."

    def get_fields(self) -> dict[str, serializers.Field]:  # type: ignore[type-arg]
        return {
            key: StringField(required=False, max_length=MAX_TEXT_CHARS[key], help_text=_TEXT_HELP[key])
            for key in TEXT_KEYS
        }

    class Meta:
        ref_name = "WorkspaceLanguageTexts"


class WorkspaceTextsSerializer(_ClosedSerializer):
    """``texts``: the workspace's own texts per language (workspaces/texts.py)."""

    unknown_message = f"Unknown language; one of {', '.join(text_languages())}."

    def get_fields(self) -> dict[str, serializers.Field]:  # type: ignore[type-arg]
        return {code: LanguageTextsSerializer(required=False) for code in text_languages()}

    class Meta:
        ref_name = "WorkspaceTexts"


class WorkspaceOutputSerializer(serializers.ModelSerializer[Workspace]):
    texts = WorkspaceTextsSerializer(
        read_only=True, help_text="The workspace's own texts per language (only those it set)."
    )

    class Meta:
        model = Workspace
        fields = ["id", *services.WORKSPACE_FIELDS, "created_at", "updated_at"]
        ref_name = "Workspace"


class WorkspaceSettingsMixin(serializers.Serializer[Any]):
    system_prompt = StringField(required=False, allow_blank=True, max_length=20_000)
    history_turns = serializers.IntegerField(required=False, min_value=0, max_value=100)
    top_k = serializers.IntegerField(required=False, min_value=1, max_value=50)
    widened_top_k = serializers.IntegerField(required=False, min_value=1, max_value=50)
    per_resource_k = serializers.IntegerField(required=False, min_value=1, max_value=20)
    retention_days = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=36500)
    on_generation_unavailable = serializers.ChoiceField(
        choices=GenerationFallback.choices,
        required=False,
        help_text="extractive (default): when generation is unavailable, answer with the extractive "
        "engine (degraded: true); error: answer 503 llm_unavailable.",
    )
    no_answer_text = StringField(
        required=False,
        min_length=1,
        max_length=2000,
        help_text='The reply when the documents do not answer the question (grounding "none", no sources).',
    )
    small_talk_text = StringField(
        required=False,
        min_length=1,
        max_length=2000,
        help_text='The reply to small talk: a greeting, thanks, a goodbye (grounding "none", no sources).',
    )
    texts = WorkspaceTextsSerializer(
        required=False,
        help_text="The workspace's own texts per language: an object keyed by language code (en, fa, ar, "
        "de, fr), each an object of texts (no_answer_text, small_talk_text, no_documents_text, which_one, "
        "form_title). A turn in a language takes the workspace's text for it, else the single "
        "no_answer_text / small_talk_text when changed from the default, else the built-in text of that "
        "language. Sent, it replaces every language's texts ({} clears them).",
    )
    answerability_threshold = serializers.FloatField(
        required=False,
        min_value=0.0,
        max_value=1.0,
        help_text="0 to 1, default 0.38: the least answerability score (how closely the best sentence of "
        "the retrieved passages answers the question) for which the documents are taken to answer; "
        "below it the reply is no_answer_text. Higher abstains more often.",
    )
    allowed_origins = serializers.ListField(
        child=serializers.CharField(max_length=ORIGIN_MAX_LENGTH, trim_whitespace=False),
        required=False,
        max_length=MAX_ORIGINS,
        help_text="Origins (scheme://host[:port], no path, no wildcard) whose pages may call the end-user "
        "routes with an end-user token (CORS). Stored as browsers send them: lower case, no default port. "
        "Empty (default): no browser origin.",
    )

    metadata_keys = serializers.JSONField(
        required=False,
        help_text="The metadata keys this workspace's resources may carry, with their types: an object "
        'of key: type, e.g. {"customer": "string", "year": "number", "public": "boolean", "updated": '
        '"date", "tags": "list"} (date: an ISO 8601 string; list: a list of strings). When set, a '
        "resource's metadata may hold only these keys, each of its type (400 naming the key). Empty "
        "(default): any key. Sent, it replaces the whole object; stored metadata is not checked again.",
    )

    def validate_metadata_keys(self, value: Any) -> dict[str, str]:
        problems = metadata_keys_problems(value)
        if "" in problems:
            raise serializers.ValidationError(problems[""])
        if problems:
            raise serializers.ValidationError(problems)  # reported as metadata_keys.<key>
        return dict(value)

    def validate_allowed_origins(self, value: list[str]) -> list[str]:
        origins, problems = origins_normalize(value)
        if problems:
            # Keyed by position, as DRF's list fields do: reported as allowed_origins[i].
            detail: dict[Any, list[str]] = {index: [problem] for index, problem in problems.items()}
            raise serializers.ValidationError(detail)
        return origins

    def validate_texts(self, value: dict[str, Any]) -> dict[str, dict[str, str]]:
        # As plain JSON, a language sent without texts left out.
        return {code: dict(texts) for code, texts in value.items() if texts}

    def validate_answerability_threshold(self, value: float) -> float:
        if not math.isfinite(value):
            raise serializers.ValidationError("A number from 0 to 1 is required.")
        return value


class WorkspaceListCreateApi(ListCreateMixin, APIView):
    permission_classes = [IsAdminKey]
    tags = ["Workspaces"]
    row_serializer = WorkspaceOutputSerializer
    schema_name = "Workspace"
    ordering = ("created_at", "id")

    class InputSerializer(WorkspaceSettingsMixin):
        name = StringField(max_length=200)

        class Meta:
            ref_name = "WorkspaceCreateInput"

    create_serializer = InputSerializer
    list_operation = Operation(
        "workspaces_list",
        "List workspaces",
        "The organization's workspaces, oldest first, with their settings (admin keys). A key "
        "limited to some workspaces sees only those.",
    )
    create_operation = Operation(
        "workspaces_create",
        "Create a workspace",
        "A new workspace in the key's organization (admin keys): `name`, and optionally its "
        "settings (system prompt, retrieval sizes, history, answerability threshold, replies for "
        "no answer and small talk, retention, allowed origins). 201 with the workspace.",
    )

    def owner(self, **path: Any) -> ApiKey:
        return request_api_key(self.request)

    def rows(self, owner: ApiKey) -> QuerySet[Workspace]:
        return selectors.workspace_list(api_key=owner)

    @idempotent
    def post(self, request: Request, **path: Any) -> Response:
        if request_api_key(request).allowed_workspace_ids:
            raise Forbidden("A key limited to some workspaces cannot create workspaces.")
        return super().post(request, **path)

    def create(self, owner: ApiKey, data: Any) -> Workspace:
        return services.workspace_create(organization=owner.organization, **data)


class WorkspaceDetailApi(DetailMixin, WorkspaceGenericApi):
    admin_methods = frozenset({"GET", "PATCH", "DELETE"})
    tags = ["Workspaces"]
    row_serializer = WorkspaceOutputSerializer
    schema_name = "Workspace"

    class InputSerializer(WorkspaceSettingsMixin):
        name = StringField(max_length=200, required=False)

        class Meta:
            ref_name = "WorkspaceUpdateInput"

    update_serializer = InputSerializer
    retrieve_operation = Operation(
        "workspaces_get",
        "Get a workspace",
        "One workspace and its settings (admin keys). Another organization's workspace, or one "
        "the key is not allowed, is 404.",
    )
    update_operation = Operation(
        "workspaces_update",
        "Update a workspace",
        "Change the name or any settings (admin keys); fields not sent keep their values.",
    )
    destroy_operation = Operation(
        "workspaces_delete",
        "Delete a workspace",
        "Delete the workspace with its resources, passages, sessions and messages (admin keys). 204.",
    )

    def row(self, **path: Any) -> Workspace:
        return self.workspace

    def update(self, row: Workspace, data: Any) -> Workspace:
        return services.workspace_update(workspace=row, **data)

    def destroy(self, row: Workspace) -> None:
        services.workspace_delete(workspace=row)


class SigningSecretApi(WorkspaceApi):
    """Make or rotate the workspace's signing secret for end-user tokens."""

    admin_methods = frozenset({"POST"})

    class InputSerializer(serializers.Serializer[Any]):
        grace_seconds = serializers.IntegerField(
            required=False,
            min_value=0,
            max_value=tokens.MAX_GRACE_SECONDS,
            default=tokens.DEFAULT_GRACE_SECONDS,
            help_text="How long tokens signed with the secret being replaced stay valid (default 900; "
            "0: revoke them at once). A secret older than the one replaced stops now.",
        )

        class Meta:
            ref_name = "SigningSecretInput"

    class OutputSerializer(serializers.Serializer[Any]):
        signing_secret = serializers.CharField(
            help_text="HS256 key for end-user tokens (use the string as is). Shown only here, once."
        )
        rotated_at = serializers.DateTimeField()
        previous_valid_until = serializers.DateTimeField(
            allow_null=True, help_text="Until when tokens signed with the previous secret are accepted."
        )

        class Meta:
            ref_name = "SigningSecret"

    @extend_schema(
        operation_id="workspaces_signing_secret_rotate",
        summary="Rotate the token signing secret",
        description=(
            "A new signing secret for end-user tokens, shown only in this response (mint tokens "
            "offline with it). Tokens signed with the previous one stay valid for `grace_seconds` "
            "(default 900), then are refused; older secrets stop at once. Not idempotent: a retry "
            "rotates again. Admin keys only."
        ),
        tags=["End-user tokens"],
        request=InputSerializer,
        responses={201: envelope("SigningSecretRotated", OutputSerializer)},
    )
    def post(self, request: Request, workspace_id: str) -> Response:
        # Not idempotent on purpose: a replay would have to store the secret.
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        secret = tokens.signing_secret_rotate(
            workspace=self.workspace, grace_seconds=serializer.validated_data["grace_seconds"]
        )
        data = {
            "signing_secret": secret,
            "rotated_at": self.workspace.token_secret_rotated_at,
            "previous_valid_until": self.workspace.token_secret_previous_until,
        }
        return ok(self.OutputSerializer(data).data, status=201)
