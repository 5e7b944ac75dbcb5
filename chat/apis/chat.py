"""The chat endpoints: one turn answered at once (``POST …/chat/``) or
streamed as server-sent events (``POST …/chat/stream/``). Both parse the same
input into a ``TurnRequest``."""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from chat.contract import ChatResult
from chat.message_list import Conversation, conversation_parse
from chat.serializers import (
    ChatResultSchema,
    ExternalUserIdField,
    MessagesField,
    message_data,
    session_summary,
)
from chat.services.turn import (
    PreparedTurn,
    TurnRequest,
    TurnResume,
    release_connection,
    reply_data,
    turn_complete,
    turn_prepare,
    turn_resume_data,
)
from chat.streaming import EventStreamNegotiation, NativeEvents, replay_stream, stream_response, turn_stream
from daneshyar.api import StringField, UUIDField, ok
from daneshyar.schema import also_answers, envelope
from retrieval.serializers import FiltersField, GroupsField, access_of
from workspaces.access import EndUserApi, WorkspaceApi
from workspaces.idempotency import StoredClaim, idempotency_stored, idempotent, request_claim


class ChatInputSerializer(serializers.Serializer[Any]):
    external_user_id = ExternalUserIdField(
        trim_whitespace=False,
        help_text="The end user. With an end-user token it may be omitted (the token's) and, when sent, "
        "must be the token's (403 otherwise).",
    )
    message = StringField(
        min_length=1,
        max_length=32_000,
        trim_whitespace=False,
        required=False,
        help_text="The user's message. Exactly one of `message` and `messages`.",
    )
    messages = MessagesField(required=False)
    session_id = UUIDField(required=False, allow_null=True)
    resource_ids = serializers.ListField(child=UUIDField(), required=False, max_length=20)
    filters = FiltersField()
    groups = GroupsField()
    model = StringField(required=False, allow_null=True, max_length=200)
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
    return Conversation.single(data["message"])


def _prepare(view: WorkspaceApi, request: Request) -> tuple[PreparedTurn, StoredClaim]:
    """The turn of a body validated before the rate limits (WorkspaceApi.end_user_of),
    its question stored."""
    data = view.turn_input
    access = access_of(data)
    prepared = turn_prepare(
        TurnRequest(
            principal=view.principal,
            workspace=view.workspace,
            external_user_id=data["external_user_id"],
            conversation=conversation_of(data),
            session_id=data.get("session_id"),
            resource_ids=tuple(data.get("resource_ids") or ()),
            filters=access.filters,
            groups=access.groups,
            model=data.get("model"),
            include_prompt_trace=data["include_prompt_trace"],
            certificate=data["certificate"],
            resume=TurnResume.from_json(request_claim(request).resume),
        )
    )
    # The question is stored: a retry with the same Idempotency-Key answers it.
    stored = idempotency_stored(
        request,
        external_user_id=data["external_user_id"],
        session_id=prepared.question.session.id,
        resume=turn_resume_data(prepared),
    )
    return prepared, stored


class ChatApi(EndUserApi):
    turn_methods = frozenset({"POST"})
    turn_serializer = ChatInputSerializer

    @extend_schema(
        operation_id="chat",
        summary="Send a message",
        description=(
            "One chat turn: the end user's `message` (or the conversation as OpenAI-style `messages`)"
            " is stored, passages are retrieved from the workspace's ready resources, and the reply "
            "comes back as an `answer` whose parts cite their passages, or a `form` that asks back. "
            "Without `session_id` a new session starts, titled from the message."
        ),
        tags=["Chat"],
        request=ChatInputSerializer,
        responses=envelope("ChatTurn", ChatResultSchema),
    )
    @also_answers(403)  # include_prompt_trace without an admin key; another end user's id with a token
    @idempotent
    def post(self, request: Request, workspace_id: str) -> Response:
        prepared, stored = _prepare(self, request)
        with stored:
            reply = turn_complete(prepared)
        question = prepared.question
        data: ChatResult = {
            "session": session_summary(question.session, created=question.created),
            "user_message": message_data(question.message),
            "assistant_message": reply_data(prepared, reply),
        }
        if prepared.request.include_prompt_trace:
            data["prompt_trace"] = prepared.trace(reply)
        return ok(data)


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


class ChatStreamApi(EndUserApi):
    content_negotiation_class = EventStreamNegotiation
    turn_methods = frozenset({"POST"})
    turn_serializer = ChatInputSerializer

    @extend_schema(
        operation_id="chat_stream",
        summary="Send a message, streamed",
        description=(
            "The same turn as `POST …/chat/`, answered as server-sent events: `session`, "
            "`prompt_trace` (when asked), `delta`s of the answer text, then the final `message` "
            "(authoritative) or an `error`. The turn is stored even if the client disconnects."
        ),
        tags=["Chat"],
        request=ChatInputSerializer,
        responses={
            (200, "text/event-stream"): OpenApiResponse(
                SSE_EVENT_SCHEMA,
                description="Server-sent events (the schema is one event's): session, [prompt_trace], "
                "delta*, then message or error.",
            )
        },
    )
    @also_answers(403)  # include_prompt_trace without an admin key; another end user's id with a token
    @idempotent(replay=lambda stored: stream_response(replay_stream(stored.data)))
    def post(self, request: Request, workspace_id: str) -> StreamingHttpResponse:
        # Errors up to here (400/403/404) are ordinary JSON error responses.
        prepared, stored = _prepare(self, request)
        release_connection()
        # Told from the turn's worker when the turn is stored (or failed).
        return turn_stream(prepared, NativeEvents(prepared), stored.finish())
