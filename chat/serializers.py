"""Output shapes of sessions and messages (the "Chat shape" of the spec),
and the ``messages`` input field both chat endpoints share.

Plain functions rather than ModelSerializers: the shapes depend on the role
and are also built in the streaming worker thread. The schema-only
serializers below document them for drf-spectacular.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers

from chat.contract import DecisionReason, FieldType, MessageData, ResponseType, SessionData, SessionRef
from chat.message_list import MAX_CONTENT_CHARS, MAX_MESSAGES
from chat.models import CONSOLE_USER_PREFIX, Grounding, GuardAction, Message, MessageRole, Session
from daneshyar.api import StringField, timestamp
from retrieval.serializers import bbox_field

CONSOLE_PREFIX_MESSAGE = f"Ids starting with {CONSOLE_USER_PREFIX!r} are reserved for the admin console."


def end_user_id_errors(value: str) -> list[str]:
    """What is wrong with ``value`` as an ``external_user_id`` (nothing: ``[]``)."""
    if not 1 <= len(value) <= 255:
        return ["Must be 1 to 255 characters."]
    if value.startswith(CONSOLE_USER_PREFIX):
        return [CONSOLE_PREFIX_MESSAGE]
    return []


class ExternalUserIdField(StringField):
    """An end user's id: a JSON string of 1 to 255 characters. A number is
    refused rather than turned into a string (the per-user rate limit reads
    the body as sent), and so is the ``console:`` prefix of the console's
    playground end users (sessions an API client could neither see nor export)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("min_length", 1)
        kwargs.setdefault("max_length", 255)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if value.startswith(CONSOLE_USER_PREFIX):
            raise serializers.ValidationError(CONSOLE_PREFIX_MESSAGE)
        return value


def session_summary(session: Session, *, created: bool) -> SessionRef:
    return {"id": str(session.id), "title": session.title, "created": created}


def session_detail(session: Session) -> SessionData:
    return {
        "id": str(session.id),
        "title": session.title,
        "external_user_id": session.external_user_id,
        "message_count": session.message_count,
        "created_at": timestamp(session.created_at),
        "updated_at": timestamp(session.updated_at),
    }


def message_data(message: Message) -> MessageData:
    role = MessageRole(message.role)
    if role == MessageRole.ASSISTANT:
        return {
            "id": str(message.id),
            "role": "assistant",
            "content": message.content,
            "response": message.reply,
            "grounding": message.grounding,
            "model": message.model,
            "degraded": message.degraded,
            "provenance": message.provenance_data,
            "guard": message.guard_data,
            "created_at": timestamp(message.created_at),
        }
    return {
        "id": str(message.id),
        "role": "user",
        "content": message.content,
        "created_at": timestamp(message.created_at),
    }


# --- OpenAPI descriptions -------------------------------------------------------
# inline_serializer: some field names ("source", "required", "fields") clash
# with attributes of DRF's Field classes when declared on a class body.

_source = inline_serializer(
    "ChatSource",
    {
        "resource_id": serializers.UUIDField(),
        "resource_title": serializers.CharField(),
        "passage_id": serializers.UUIDField(),
        "page": serializers.IntegerField(
            allow_null=True, required=False, help_text="1-based page where the passage starts (v1.4)."
        ),
        "bbox": bbox_field(),
    },
    allow_null=True,
)
_part = inline_serializer(
    "ChatPart",
    {
        "text": serializers.CharField(),
        "source": _source,
        "language": serializers.CharField(
            required=False,
            help_text="The part's language (BCP 47) where it is not the reply's (the question's): a "
            "passage quoted in its own language, so a client can set the part's direction (v1.4).",
        ),
    },
    many=True,
)
_form_field = inline_serializer(
    "ChatFormField",
    {
        "name": serializers.CharField(),
        "label": serializers.CharField(),
        "type": serializers.ChoiceField(choices=[t.value for t in FieldType]),
        "required": serializers.BooleanField(),
        "placeholder": serializers.CharField(required=False),
        "options": serializers.ListField(
            child=serializers.CharField(),
            required=False,
            help_text="The options' labels (select, radio, a checkbox group): what to show, and what a "
            "client may send back as the answer.",
        ),
        "choices": inline_serializer(
            "ChatFormChoice",
            {
                "value": serializers.CharField(
                    help_text='What identifies the option: on the "Which one do you mean?" form, the '
                    "document's (resource's) id. Send it back as the answer (`subject: <value>`)."
                ),
                "label": serializers.CharField(help_text="What to show: the same as the option's label."),
            },
            many=True,
            required=False,
            help_text="The same options as `options`, in the same order, each with its value: present when "
            'the options stand for something with an id (the documents of a "Which one do you mean?" '
            "form). The answer is resolved by value, or by the label's number, text, start or own word.",
        ),
    },
    many=True,
)
_form = inline_serializer(
    "ChatForm", {"title": serializers.CharField(), "fields": _form_field}, allow_null=True
)
_response = inline_serializer(
    "ChatResponse",
    {"type": serializers.ChoiceField(choices=[t.value for t in ResponseType]), "parts": _part, "form": _form},
    required=False,
    help_text="Assistant messages only.",
)


class MessageSchema(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    role = serializers.ChoiceField(choices=MessageRole.values)
    content = serializers.CharField()
    response = _response
    grounding = serializers.ChoiceField(
        choices=Grounding.values, required=False, help_text="Assistant messages only."
    )
    model = serializers.CharField(required=False, help_text="Assistant messages only.")
    degraded = serializers.BooleanField(
        required=False,
        help_text="Assistant messages only: true when generation was unavailable and the extractive "
        "engine answered (model is then the engine's).",
    )
    provenance = inline_serializer(
        "ChatProvenance",
        {
            "messages_hash": serializers.CharField(
                help_text="SHA-256 (hex) of the canonical JSON (sorted keys, no whitespace, UTF-8) of the "
                "exact messages the reply was produced from (the prompt trace's messages)."
            )
        },
        required=False,
        allow_null=True,
        help_text="Assistant messages only; null on assistant messages supplied by the client in "
        '`messages` (their model is "client").',
    )
    guard = inline_serializer(
        "ChatGuard",
        {
            "action": serializers.ChoiceField(choices=GuardAction.values),
            "rule_ids": serializers.ListField(
                child=serializers.CharField(),
                help_text="The workspace's guard rules that matched, and claim:<n> for a claims check "
                "answered yes.",
            ),
        },
        required=False,
        allow_null=True,
        help_text="Assistant messages only: null, or what the workspace's output guard did — flag "
        "(returned, queued for review) or block (the safe reply returned instead).",
    )
    certificate = inline_serializer(
        "ChatCertificate",
        {
            "payload": serializers.CharField(
                help_text="The signed statement: canonical JSON (sorted keys, no whitespace, UTF-8) of "
                "message_id, session_id, workspace_id, model, created_at, response_sha256, sources "
                "[{passage_id, resource_id, text_sha256}] and messages_hash."
            ),
            "signature": serializers.CharField(
                help_text="Ed25519 over the payload's UTF-8 bytes, base64url."
            ),
            "key_id": serializers.CharField(help_text="The key in GET /api/v1/certificates/keys."),
            "alg": serializers.CharField(help_text="EdDSA."),
        },
        required=False,
        help_text="Only on the reply of a request with certificate: true.",
    )
    created_at = serializers.DateTimeField()

    class Meta:
        ref_name = "ChatMessage"


class SessionSummarySchema(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    title = serializers.CharField()
    created = serializers.BooleanField()

    class Meta:
        ref_name = "ChatSessionRef"


class TraceSchema(serializers.Serializer[Any]):
    passages = serializers.ListField(
        child=serializers.DictField(),
        help_text="The passages in the prompt, best first: passage_id, resource_id, score and "
        "language (detected at ingestion: en, fa, ar, de, fr or und).",
    )
    messages = serializers.ListField(child=serializers.DictField())
    budget = serializers.DictField(
        required=False,
        help_text="context_length, max_tokens, prompt_budget (what the prompt may take) and "
        "prompt_tokens (what it took). Absent for the extractive engine.",
    )
    dropped = serializers.DictField(
        required=False,
        help_text="What did not fit the budget: passages (lowest-ranked first), history turns "
        "(oldest first, by message ids) and a passage cut short (truncated_passage_id).",
    )
    retrieval_queries = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="What was searched: the question, and for a follow-up the question with the "
        "earlier user turns (newest first) and, on generative models, the question the model made "
        "standalone. Absent when nothing was searched (small talk, no documents).",
    )
    answerability = serializers.FloatField(
        required=False,
        allow_null=True,
        help_text="How closely the retrieved passages answer the question (0..1), compared with the "
        "workspace's answerability_threshold; null when not assessed.",
    )
    decision = serializers.ChoiceField(
        choices=["answer", "no_answer", "clarify", "small_talk"],
        required=False,
        help_text="answer; no_answer (the documents don't say: no_answer_text); clarify (a form asking "
        "which subject is meant); small_talk (small_talk_text).",
    )
    reason = serializers.ChoiceField(
        choices=[r.value for r in DecisionReason],
        required=False,
        allow_null=True,
        help_text="Why no answer or a form (null for an answer or small talk), as docs/api.md lists the "
        "codes: no_documents, filtered_out, below_threshold, uncovered_subject, parallel_candidates, "
        "unresolved_reference, no_sentence (the extractive engine's; not in a streamed trace).",
    )
    figures = serializers.DictField(
        required=False,
        help_text="What decided the reason (empty without one): answerability, threshold, subject_words, "
        "candidates and their scores, reference and floor, margin and overlap, passages.",
    )
    access = serializers.DictField(
        required=False,
        help_text="Who may read what in this turn, as retrieval applied it: filters (the request's, or "
        "null), groups (the end-user token's or the API-key request's; null: no group condition) and "
        "resource_ids (an end-user token's; null: any).",
    )

    class Meta:
        ref_name = "ChatPromptTrace"


class ChatResultSchema(serializers.Serializer[Any]):
    session = SessionSummarySchema()
    user_message = MessageSchema()
    assistant_message = MessageSchema()
    prompt_trace = TraceSchema(required=False, help_text="Only with include_prompt_trace (admin keys).")

    class Meta:
        ref_name = "ChatResult"


class SessionSchema(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    title = serializers.CharField()
    external_user_id = serializers.CharField()
    message_count = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    class Meta:
        ref_name = "ChatSession"


# --- Input: a conversation in the OpenAI chat format ------------------------------

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
    """Parsed and validated by chat.message_list (errors name ``messages[i]...``)."""
