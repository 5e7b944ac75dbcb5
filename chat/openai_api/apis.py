"""An OpenAI-compatible endpoint per workspace.

Base URL ``/api/v1/workspaces/{workspace_id}/openai/v1``: ``GET models`` and
``POST chat/completions``, what the official SDKs and OpenAI-compatible chat
front ends call, authenticated with ``Authorization: Bearer dk_live_…`` (or
``X-API-Key``). Every turn runs through the same chat service as
``POST …/chat/`` — sessions stored per end user (``user``), tenancy, the
history window, retrieval, degrading to the extractive engine — and answers
in OpenAI's shapes, with the citations as ``annotations`` and Daneshyar's
typed reply in a ``daneshyar`` object. Errors use OpenAI's shape with the
native API's status codes.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from chat.message_list import conversation_parse
from chat.openai_api import shapes
from chat.openai_api.streaming import STREAM_REPLAY, CompletionChunks, completion_replay
from chat.serializers import ExternalUserIdField, MessagesField, message_data
from chat.services.models import model_list
from chat.services.turn import (
    PreparedTurn,
    TurnRequest,
    TurnResume,
    release_connection,
    turn_complete,
    turn_prepare,
    turn_resume_data,
)
from chat.streaming import EventStreamNegotiation, turn_stream
from daneshyar.api import uuid_of
from daneshyar.exceptions import ValidationFailed, exception_handler
from retrieval.serializers import FiltersField, GroupsField, access_of
from workspaces.access import EndUserApi
from workspaces.idempotency import StoredClaim, idempotency_stored, idempotent, request_claim


def openai_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """The envelope's error, in OpenAI's shape (same status and headers)."""
    response = exception_handler(exc, context)
    error = response.data["error"]
    body = shapes.error_object(response.status_code, error["code"], error["message"], error.get("fields"))
    for extra in ("session_id",):
        if extra in error:
            body["error"][extra] = error[extra]
    response.data = body
    return response


class OpenAIErrorSchema(serializers.Serializer[Any]):
    """OpenAI's error shape (the schema of this endpoint's error responses)."""

    error = inline_serializer(
        "OpenAIErrorDetail",
        {
            "message": serializers.CharField(),
            "type": serializers.CharField(help_text="invalid_request_error, authentication_error, ..."),
            "code": serializers.CharField(help_text="The native API's error code (validation_error, ...)."),
            "param": serializers.CharField(allow_null=True, help_text="The first invalid field, if any."),
            "session_id": serializers.UUIDField(
                required=False, help_text="A turn that failed after its session was created."
            ),
        },
    )

    class Meta:
        ref_name = "OpenAIError"


class OpenAIApi(EndUserApi):
    # Keys as X-API-Key or Bearer, and end-user tokens (EndUserApi).
    # Read by daneshyar.schema.AutoSchema for the documented error responses.
    error_schema = OpenAIErrorSchema

    def get_exception_handler(self) -> Callable[[Exception, dict[str, Any]], Response]:
        return openai_exception_handler


class OpenAIModelsApi(OpenAIApi):
    names_end_user = False

    @extend_schema(
        operation_id="openai_models_list",
        summary="List models (OpenAI-compatible)",
        description=(
            'The deployment\'s models in OpenAI\'s list shape (`{"object": "list", "data": [...]}`), '
            "for OpenAI SDKs and chat front ends."
        ),
        tags=["OpenAI-compatible"],
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT, description='OpenAI\'s {"object": "list", "data": [...]}'
            )
        },
    )
    def get(self, request: Request, workspace_id: Any) -> Response:
        return Response(
            {
                "object": "list",
                "data": [
                    {"id": m["id"], "object": "model", "created": 0, "owned_by": "daneshyar"}
                    for m in model_list()
                ],
            }
        )


class CompletionInputSerializer(serializers.Serializer[Any]):
    model = serializers.CharField(max_length=200, help_text="An id from GET models.")
    messages = MessagesField()
    user = ExternalUserIdField(
        trim_whitespace=False,
        help_text="The end user (Daneshyar's external_user_id): sessions are stored per end user. With an "
        "end-user token it may be omitted (the token's) and, when sent, must be the token's (403 otherwise).",
    )
    stream = serializers.BooleanField(required=False, default=False)
    stream_options = serializers.DictField(required=False, allow_null=True)
    max_tokens = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    max_completion_tokens = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    temperature = serializers.FloatField(required=False, allow_null=True, min_value=0, max_value=2)
    n = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    metadata = serializers.DictField(
        child=serializers.CharField(allow_blank=True, max_length=512),
        required=False,
        allow_null=True,
        help_text="session_id: continue a stored session (from daneshyar.session_id).",
    )
    # Extensions, sent with the SDK's extra_body: who may read what (retrieval/filters.py).
    filters = FiltersField()
    groups = GroupsField()

    class Meta:
        ref_name = "OpenAIChatCompletionInput"

    def validate_n(self, value: int | None) -> int | None:
        if value is not None and value != 1:
            raise serializers.ValidationError("Only n=1 is supported: a turn has one stored reply.")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        raw = self.initial_data if isinstance(self.initial_data, dict) else {}
        for name in ("tools", "functions"):
            if raw.get(name):
                raise serializers.ValidationError({name: ["Tools and function calling are not supported."]})
        if raw.get("tool_choice") not in (None, "none"):
            raise serializers.ValidationError(
                {"tool_choice": ["Tools and function calling are not supported."]}
            )
        response_format = raw.get("response_format")
        if isinstance(response_format, dict) and response_format.get("type") not in (None, "text"):
            raise serializers.ValidationError(
                {
                    "response_format": [
                        "Only text: the reply's structure is Daneshyar's (see daneshyar.response)."
                    ]
                }
            )
        return attrs


class ChatCompletionsApi(OpenAIApi):
    content_negotiation_class = EventStreamNegotiation
    turn_methods = frozenset({"POST"})
    turn_serializer = CompletionInputSerializer
    turn_user_field = "user"

    @extend_schema(
        operation_id="openai_chat_completions",
        summary="Chat completions (OpenAI-compatible)",
        description=(
            "OpenAI's chat completions API over the workspace: the same turn as `POST …/chat/`, "
            "stored for the end user named by `user`, answered as a `chat.completion` (or "
            "`chat.completion.chunk` events with `stream: true`) with citations as `annotations` and "
            "a `daneshyar` object (session, message, typed response). A form asking which document is "
            "meant is text too: its question, then its options numbered (answer with a number or a name "
            "in the next user message). Errors in OpenAI's shape. "
            "`Authorization: Bearer <key>` or `X-API-Key`."
        ),
        tags=["OpenAI-compatible"],
        request=CompletionInputSerializer,
        responses={
            (200, "application/json"): OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="A chat.completion (choices[0].message.content, annotations with the "
                "citations, usage) plus a daneshyar object (session_id, message_id, the typed response, "
                "grounding, degraded, provenance). With stream: text/event-stream of chat.completion.chunk "
                "events ending with data: [DONE].",
            ),
            (200, "text/event-stream"): OpenApiResponse(
                {
                    "type": "object",
                    "properties": {
                        "data": {
                            "type": "string",
                            "description": "A chat.completion.chunk as JSON, or [DONE] last.",
                        }
                    },
                    "required": ["data"],
                },
                description="With stream: true (the schema is one event's).",
            ),
        },
    )
    @idempotent(replay=completion_replay)
    def post(self, request: Request, workspace_id: Any) -> Response | StreamingHttpResponse:
        data = self.turn_input  # validated before the rate limits (WorkspaceApi.end_user_of)
        prepared = turn_prepare(self._turn_request(data, TurnResume.from_json(request_claim(request).resume)))
        # The question is stored: a retry with the same Idempotency-Key answers it.
        stored = idempotency_stored(
            request,
            external_user_id=data["user"],
            session_id=prepared.question.session.id,
            resume=turn_resume_data(prepared),
        )
        completion = _Completion(request, prepared, created=int(time.time()))
        if data["stream"]:
            return self._stream(prepared, completion, stored, data.get("stream_options") or {})
        with stored:
            reply = turn_complete(prepared)
        return Response(completion(message_data(reply), reply.prompt_tokens, reply.completion_tokens))

    def _turn_request(self, data: dict[str, Any], resume: TurnResume | None) -> TurnRequest:
        metadata = data.get("metadata") or {}
        session_id = metadata.get("session_id") or None
        access = access_of(data)
        return TurnRequest(
            principal=self.principal,
            workspace=self.workspace,
            external_user_id=data["user"],
            conversation=conversation_parse(data["messages"]),
            session_id=_session_id(session_id) if session_id is not None else None,
            model=data["model"],
            filters=access.filters,
            groups=access.groups,
            max_tokens=data.get("max_completion_tokens") or data.get("max_tokens"),
            temperature=data.get("temperature"),
            resume=resume,
        )

    def _stream(
        self, prepared: PreparedTurn, completion: _Completion, stored: StoredClaim, options: dict[str, Any]
    ) -> StreamingHttpResponse:
        def replay(result: Any) -> dict[str, Any]:
            # From the turn's worker: the stream is stored for a replay as chunks.
            return {**completion(result["assistant_message"], None, None), "object": STREAM_REPLAY}

        release_connection()
        chunks = CompletionChunks(
            prepared, completion.created, include_usage=bool(options.get("include_usage"))
        )
        return turn_stream(prepared, chunks, stored.finish(replay))


class _Completion:
    """A turn's reply as a chat.completion."""

    def __init__(self, request: Request, prepared: PreparedTurn, *, created: int) -> None:
        self.request = request
        self.prepared = prepared
        self.created = created

    def __call__(
        self, message: Any, prompt_tokens: int | None, completion_tokens: int | None
    ) -> dict[str, Any]:
        question = self.prepared.question
        return shapes.completion(
            request=self.request,
            workspace_id=question.session.workspace_id,
            session_id=question.session.id,
            question_id=question.message.id,
            created=self.created,
            message=message,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )


def _session_id(value: object) -> uuid.UUID:
    """``metadata.session_id``: a UUID sent as a string, or a 400 naming it."""
    session_id = uuid_of(value)
    if session_id is None:
        raise ValidationFailed(
            "The request has invalid fields.", fields={"metadata.session_id": ["Must be a valid UUID."]}
        )
    return session_id
