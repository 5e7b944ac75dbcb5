"""Chat, session, feedback and model endpoints. Views parse input, call one
service or selector, and shape the output. Every workspace-scoped view
derives from ``WorkspaceApi`` (key → workspace 404 → scope 403)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from django.conf import settings
from django.http import StreamingHttpResponse
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from chat import certificates, selectors
from chat.contract import ChatResult
from chat.conversation import MAX_CONTENT_CHARS, MAX_MESSAGES, Conversation, conversation_parse
from chat.guard import MAX_CLAIMS, MAX_PATTERN_CHARS, MAX_RULES
from chat.models import Feedback, FeedbackRating, GuardAction, GuardRule, GuardScope, Session
from chat.serializers import (
    ChatResultSchema,
    MessageSchema,
    SessionSchema,
    message_data,
    session_detail,
    session_summary,
)
from chat.services import feedback as feedback_services
from chat.services import guard as guard_services
from chat.services import sessions as session_services
from chat.services.models import model_list
from chat.services.turns import (
    PreparedTurn,
    release_connection,
    reply_data,
    turn_complete,
    turn_prepare,
    turn_resume_data,
)
from chat.streaming import event_stream, replay_stream
from daneshyar.api import PageParamsSerializer, UUIDField, ok, paginate
from daneshyar.exceptions import ApplicationError, ValidationFailed
from daneshyar.schema import also_answers, envelope, list_envelope
from workspaces.access import WorkspaceApi
from workspaces.idempotency import idempotency_finish, idempotent, request_claim
from workspaces.permissions import HasApiKey

_TEXT_PART = {
    "type": "object",
    "properties": {"type": {"type": "string", "enum": ["text"]}, "text": {"type": "string"}},
    "required": ["type", "text"],
}
MESSAGES_SCHEMA = {
    "type": "array",
    "minItems": 1,
    "maxItems": MAX_MESSAGES,
    "items": {
        "type": "object",
        "properties": {
            "role": {"type": "string", "enum": ["system", "developer", "user", "assistant"]},
            "content": {
                "oneOf": [
                    {"type": "string", "maxLength": MAX_CONTENT_CHARS},
                    {"type": "array", "minItems": 1, "items": _TEXT_PART},
                ]
            },
        },
        "required": ["role", "content"],
    },
    "description": "The conversation in the OpenAI chat format, instead of `message`: an optional "
    "system message first (appended to the workspace's instructions as an integrator note), then "
    "user and assistant messages alternating, the last one the user's question. Without "
    "`session_id` the earlier turns become the new session's history; with it they must match the "
    "stored conversation.",
}


@extend_schema_field(MESSAGES_SCHEMA)
class MessagesField(serializers.JSONField):
    """Parsed and validated by chat.conversation (errors name ``messages[i]...``)."""


class ChatInputSerializer(serializers.Serializer[Any]):
    external_user_id = serializers.CharField(min_length=1, max_length=255, trim_whitespace=False)
    message = serializers.CharField(
        min_length=1,
        max_length=32_000,
        trim_whitespace=False,
        required=False,
        help_text="The user's message. Exactly one of `message` and `messages`.",
    )
    messages = MessagesField(required=False)
    session_id = UUIDField(required=False, allow_null=True)
    resource_ids = serializers.ListField(child=UUIDField(), required=False, max_length=20)
    model = serializers.CharField(required=False, allow_null=True, max_length=200)
    include_prompt_trace = serializers.BooleanField(required=False, default=False)
    certificate = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Sign the reply: assistant_message.certificate (verify with GET /certificates/keys).",
    )

    class Meta:
        ref_name = "ChatInput"

    def validate_message(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("The message is empty.")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        given = [name for name in ("message", "messages") if name in attrs]
        if len(given) != 1:
            problem = "Send exactly one of message and messages."
            raise serializers.ValidationError({"message": [problem], "messages": [problem]})
        return attrs


class ChatInputScheme(OpenApiSerializerExtension):  # type: ignore[no-untyped-call]
    """The schema says what ``validate`` enforces: exactly one of ``message``
    and ``messages`` (a body with both, or with neither, is 400)."""

    target_class = ChatInputSerializer

    def map_serializer(self, auto_schema: AutoSchema, direction: Any) -> dict[str, Any]:
        schema: dict[str, Any] = auto_schema._map_serializer(  # type: ignore[no-untyped-call]
            self.target, direction, bypass_extensions=True
        )
        schema["oneOf"] = [{"required": ["message"]}, {"required": ["messages"]}]
        return schema


def conversation_of(data: dict[str, Any]) -> Conversation:
    """``message`` or ``messages`` of a validated chat body, as one conversation."""
    if "messages" in data:
        return conversation_parse(data["messages"])
    return Conversation(system=None, history=[], question=data["message"])


def _prepare(view: WorkspaceApi, request: Request) -> PreparedTurn:
    claim = request_claim(request)
    serializer = ChatInputSerializer(data=request.data)
    serializer.is_valid(raise_exception=True)
    data = serializer.validated_data
    conversation = conversation_of(data)
    return turn_prepare(
        api_key=view.api_key,
        workspace=view.workspace,
        external_user_id=data["external_user_id"],
        message=conversation.question,
        history=conversation.history,
        system_note=conversation.system,
        history_offset=1 if conversation.system is not None else 0,
        session_id=data.get("session_id"),
        resource_ids=list(dict.fromkeys(data.get("resource_ids") or [])),
        model=data.get("model"),
        include_prompt_trace=data["include_prompt_trace"],
        certificate=data["certificate"],
        resume=claim.resume,
    )


class ChatApi(WorkspaceApi):
    turn_methods = frozenset({"POST"})

    @extend_schema(
        operation_id="chat",
        request=ChatInputSerializer,
        responses=envelope("ChatTurn", ChatResultSchema),
    )
    @also_answers(403)  # include_prompt_trace with a chat key
    @idempotent
    def post(self, request: Request, workspace_id: str) -> Response:
        prepared = _prepare(self, request)
        try:
            reply = turn_complete(prepared)
        except ApplicationError:
            # The question is stored: a retry with the same Idempotency-Key answers it.
            request_claim(request).resume_next = turn_resume_data(prepared)
            raise
        question = prepared.question
        data: ChatResult = {
            "session": session_summary(question.session, created=question.created),
            "user_message": message_data(question.message),
            "assistant_message": reply_data(prepared, reply),
        }
        if prepared.include_trace:
            data["prompt_trace"] = prepared.trace()
        return ok(data)


class EventStreamNegotiation(DefaultContentNegotiation):
    """Any ``Accept`` is fine for the stream endpoint.

    Its success response is ``text/event-stream`` (not rendered by DRF) and
    its errors before the stream opens are JSON, whatever the client asked
    for: ``Accept: text/event-stream`` (EventSource-style clients,
    httpx-sse, fetch-event-source), ``*/*``, ``application/json`` or none.
    """

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


# One event of the stream (schemathesis validates each event against it).
SSE_EVENT_SCHEMA = {
    "type": "object",
    "properties": {
        "event": {"type": "string", "enum": ["session", "prompt_trace", "delta", "message", "error"]},
        "data": {
            "type": "string",
            "description": "JSON: session → the session object; prompt_trace → as in chat; delta → "
            '{"text"}; message → the assistant_message; error → the error object.',
        },
    },
    "required": ["event", "data"],
}


class ChatStreamApi(WorkspaceApi):
    content_negotiation_class = EventStreamNegotiation
    turn_methods = frozenset({"POST"})

    @extend_schema(
        operation_id="chat_stream",
        request=ChatInputSerializer,
        responses={
            (200, "text/event-stream"): OpenApiResponse(
                SSE_EVENT_SCHEMA,
                description="Server-sent events (the schema is one event's): session, [prompt_trace], "
                "delta*, then message or error.",
            )
        },
    )
    @also_answers(403)  # include_prompt_trace with a chat key
    @idempotent(replay=lambda stored: _stream_response(replay_stream(stored.data)))
    def post(self, request: Request, workspace_id: str) -> StreamingHttpResponse:
        # Errors up to here (400/403/404) are ordinary JSON error responses.
        prepared = _prepare(self, request)
        claim = request_claim(request)

        def finish(status: int, result: ChatResult | None) -> None:
            # Told from the turn's worker when the turn is stored (or failed).
            if result is None:
                claim.resume_next = turn_resume_data(prepared)
            idempotency_finish(claim, status=status, body=result)

        release_connection()
        return _stream_response(event_stream(prepared, finish if claim.record is not None else None))


def _stream_response(body: Iterator[bytes]) -> StreamingHttpResponse:
    response = StreamingHttpResponse(body, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: do not buffer the stream
    return response


# --- Sessions -------------------------------------------------------------------


USER_PARAM = OpenApiParameter(
    "external_user_id",
    str,
    description="The end user. Required for chat keys; admin keys may omit it.",
)


def _end_user(view: WorkspaceApi, request: Request) -> str | None:
    """``external_user_id`` from the query: required for chat keys."""
    value = request.query_params.get("external_user_id")
    if value is not None and not 1 <= len(value) <= 255:
        raise ValidationFailed(
            "Invalid external_user_id.", fields={"external_user_id": ["Must be 1 to 255 characters."]}
        )
    if value is None and not view.api_key.is_admin:
        raise ValidationFailed(
            "external_user_id is required.", fields={"external_user_id": ["This field is required."]}
        )
    return value


def _session(view: WorkspaceApi, request: Request, session_id: str) -> Session:
    return selectors.session_get(
        workspace=view.workspace, session_id=session_id, external_user_id=_end_user(view, request)
    )


class SessionListApi(WorkspaceApi):
    @extend_schema(
        operation_id="sessions_list",
        parameters=[USER_PARAM, PageParamsSerializer],
        responses=list_envelope("SessionList", SessionSchema),
    )
    def get(self, request: Request, workspace_id: str) -> Response:
        return paginate(
            request,
            selectors.session_list(workspace=self.workspace, external_user_id=_end_user(self, request)),
            ordering=("-updated_at", "-id"),
            serialize=lambda rows: [session_detail(s) for s in rows],
        )


class SessionDetailApi(WorkspaceApi):
    class UpdateSerializer(serializers.Serializer[Any]):
        title = serializers.CharField(min_length=1, max_length=200)

        class Meta:
            ref_name = "SessionUpdateInput"

    @extend_schema(
        operation_id="sessions_get",
        parameters=[USER_PARAM],
        responses=envelope("SessionDetail", SessionSchema),
    )
    def get(self, request: Request, workspace_id: str, session_id: str) -> Response:
        session = _session(self, request, session_id)
        return ok(session_detail(session))

    @extend_schema(
        operation_id="sessions_update",
        parameters=[USER_PARAM],
        request=UpdateSerializer,
        responses=envelope("SessionUpdated", SessionSchema),
    )
    def patch(self, request: Request, workspace_id: str, session_id: str) -> Response:
        session = _session(self, request, session_id)
        serializer = self.UpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        session = session_services.session_update(session=session, title=serializer.validated_data["title"])
        return ok(session_detail(session))

    @extend_schema(operation_id="sessions_delete", parameters=[USER_PARAM], responses={204: None})
    def delete(self, request: Request, workspace_id: str, session_id: str) -> Response:
        session = _session(self, request, session_id)
        session_services.session_delete(session=session)
        return Response(status=204)


class SessionMessagesApi(WorkspaceApi):
    @extend_schema(
        operation_id="sessions_messages",
        parameters=[USER_PARAM, PageParamsSerializer],
        responses=list_envelope("MessageList", MessageSchema),
    )
    def get(self, request: Request, workspace_id: str, session_id: str) -> Response:
        session = _session(self, request, session_id)
        return paginate(
            request,
            selectors.message_list(session=session),
            ordering=("sequence",),
            serialize=lambda rows: [message_data(m) for m in rows],
        )


# --- Feedback -------------------------------------------------------------------


class FeedbackOutputSerializer(serializers.ModelSerializer[Feedback]):
    message_id = serializers.UUIDField(source="message.id", read_only=True)
    session_id = serializers.UUIDField(source="message.session_id", read_only=True)

    class Meta:
        model = Feedback
        fields = [
            "id",
            "session_id",
            "message_id",
            "external_user_id",
            "rating",
            "comment",
            "created_at",
            "updated_at",
        ]
        ref_name = "Feedback"


class FeedbackApi(WorkspaceApi):
    class InputSerializer(serializers.Serializer[Any]):
        external_user_id = serializers.CharField(min_length=1, max_length=255)
        rating = serializers.ChoiceField(choices=FeedbackRating.choices)
        comment = serializers.CharField(required=False, allow_blank=True, max_length=4000, default="")

        class Meta:
            ref_name = "FeedbackInput"

    @extend_schema(
        operation_id="feedback_upsert",
        request=InputSerializer,
        responses={
            201: envelope("FeedbackCreated", FeedbackOutputSerializer),
            200: envelope("FeedbackReplaced", FeedbackOutputSerializer),
        },
    )
    @idempotent
    def post(self, request: Request, workspace_id: Any, session_id: Any, message_id: Any) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        feedback, created = feedback_services.feedback_upsert(
            workspace=self.workspace,
            session_id=session_id,
            message_id=message_id,
            external_user_id=body.validated_data["external_user_id"],
            rating=body.validated_data["rating"],
            comment=body.validated_data["comment"],
        )
        return ok(FeedbackOutputSerializer(feedback).data, status=201 if created else 200)


# --- Output guard ---------------------------------------------------------------


class GuardRuleOutputSerializer(serializers.ModelSerializer[GuardRule]):
    class Meta:
        model = GuardRule
        fields = ["id", "position", "pattern", "applies_to", "action", "created_at", "updated_at"]
        ref_name = "GuardRule"


class GuardOutputSerializer(serializers.Serializer[Any]):
    rules = GuardRuleOutputSerializer(many=True, help_text="In order; every rule is evaluated.")
    safe_reply = serializers.CharField(help_text="What a blocked reply is replaced with.")
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
        pattern = serializers.CharField(
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
        safe_reply = serializers.CharField(required=False, allow_blank=True, max_length=2000)
        claims = serializers.ListField(
            child=serializers.CharField(max_length=300), required=False, max_length=MAX_CLAIMS
        )

        class Meta:
            ref_name = "GuardPolicyInput"

    @extend_schema(operation_id="guard_rules_get", responses=envelope("GuardRules", GuardOutputSerializer))
    def get(self, request: Request, workspace_id: str) -> Response:
        return ok(GuardOutputSerializer(guard_services.guard_data(workspace=self.workspace)).data)

    @extend_schema(
        operation_id="guard_rules_replace",
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
            rules.append(guard_services.RuleInput(**rule.validated_data))
        if errors:
            raise ValidationFailed("The guard rules are invalid.", fields=errors)
        data = guard_services.guard_replace(
            workspace=self.workspace,
            rules=rules,
            safe_reply=body.validated_data.get("safe_reply"),
            claims=body.validated_data.get("claims"),
        )
        return ok(GuardOutputSerializer(data).data)


# --- Certificates ---------------------------------------------------------------


class CertificateKeysApi(APIView):
    """The public keys that verify response certificates, as a JWKS (``data``)."""

    permission_classes = [HasApiKey]

    @extend_schema(
        operation_id="certificates_keys",
        responses=envelope(
            "CertificateKeys",
            inline_serializer(
                "Jwks",
                {
                    "keys": inline_serializer(
                        "Jwk",
                        {
                            "kty": serializers.CharField(),
                            "crv": serializers.CharField(),
                            "x": serializers.CharField(),
                            "kid": serializers.CharField(),
                            "alg": serializers.CharField(),
                            "use": serializers.CharField(),
                        },
                        many=True,
                    )
                },
            ),
        ),
    )
    def get(self, request: Request) -> Response:
        return ok(certificates.jwks())


class CertificateVerifyApi(APIView):
    """Check a certificate's signature (and, given the response, that it is the one certified)."""

    permission_classes = [HasApiKey]

    class InputSerializer(serializers.Serializer[Any]):
        certificate = serializers.JSONField()
        response = serializers.JSONField(
            required=False, help_text="The assistant message's response, to check it is the one certified."
        )

        class Meta:
            ref_name = "CertificateVerifyInput"

    @extend_schema(
        operation_id="certificates_verify",
        request=InputSerializer,
        responses=envelope(
            "CertificateVerification",
            inline_serializer(
                "CertificateVerificationResult",
                {
                    "valid": serializers.BooleanField(),
                    "reason": serializers.CharField(allow_null=True),
                    "key_id": serializers.CharField(allow_null=True),
                    "payload": serializers.DictField(allow_null=True),
                },
            ),
        ),
    )
    def post(self, request: Request) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        result = certificates.certificate_verify(
            body.validated_data["certificate"], response=body.validated_data.get("response")
        )
        return ok(
            {
                "valid": result.valid,
                "reason": result.reason,
                "key_id": result.key_id,
                "payload": result.payload,
            }
        )


# --- Models ---------------------------------------------------------------------


class ModelListApi(APIView):
    permission_classes = [HasApiKey]

    @extend_schema(
        operation_id="models_list",
        responses=envelope(
            "ModelList",
            inline_serializer(
                "ModelItems",
                {
                    "items": inline_serializer(
                        "Model",
                        {
                            "id": serializers.CharField(),
                            "backend": serializers.ChoiceField(choices=list(settings.BACKENDS)),
                            "default": serializers.BooleanField(),
                            "capabilities": inline_serializer(
                                "ModelCapabilities",
                                {
                                    "generative": serializers.BooleanField(
                                        help_text="Writes its own reply (false: the extractive engine, "
                                        "which answers with the documents' own sentences)."
                                    ),
                                    "forms": serializers.BooleanField(
                                        help_text="May ask back with a typed form."
                                    ),
                                    "streaming": serializers.BooleanField(),
                                    "context_length": serializers.IntegerField(
                                        allow_null=True,
                                        help_text="The model's window in tokens; null when it has none "
                                        "or the server does not report it now.",
                                    ),
                                },
                            ),
                        },
                        many=True,
                    ),
                    "next_cursor": serializers.CharField(allow_null=True),
                },
            ),
        ),
    )
    def get(self, request: Request) -> Response:
        return ok({"items": model_list(), "next_cursor": None})
