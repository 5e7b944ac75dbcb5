"""The chat reply contract, typed once (spec "Chat").

From the model's validated output (``chat.output``) through storage
(``Message.response``) to the API (``chat.serializers``), the streaming
events and the transcript export, a reply has these shapes. The enum values
here are the only place they are spelled out; the OpenAPI description in
``chat.serializers`` is built from them.

This module is the bottom of the chat app: it imports nothing from chat (the
``chat-layers`` import contract). The backends' message and schema types are
defined here too (``chat.backends.base`` names them), so that the prompt
trace can use them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal, NotRequired, TypedDict


class ChatMessage(TypedDict):
    role: Literal["system", "user", "assistant"]
    content: str


# A JSON Schema document (the reply's structure, chat/output.py): JSON, so
# its values are of any JSON type.
JsonSchema = dict[str, Any]


class ResponseType(StrEnum):
    ANSWER = "answer"
    FORM = "form"


class DecisionReason(StrEnum):
    """Why a turn's reply is no answer or a form asking back: ``reason`` of
    the prompt trace and of an evaluation run's item, with the figures that
    decided it (chat/services/turn/decide.py, docs/api.md)."""

    # The best sentence scores below the workspace's answerability threshold.
    BELOW_THRESHOLD = "below_threshold"
    # The question names a subject none of the retrieved documents covers.
    UNCOVERED_SUBJECT = "uncovered_subject"
    # Documents answer alike, each for its own subject: which one is meant?
    PARALLEL_CANDIDATES = "parallel_candidates"
    # The question points at a subject the conversation never named.
    UNRESOLVED_REFERENCE = "unresolved_reference"
    # Documents are ready, but none the turn may read (its filters, groups,
    # resources, or the document chosen) has a passage.
    FILTERED_OUT = "filtered_out"
    # The workspace has no ready document (a turn with filters still searches them).
    NO_DOCUMENTS = "no_documents"
    # The passages pass the threshold, but the extractive engine finds no
    # sentence of them to answer with.
    NO_SENTENCE = "no_sentence"


class FieldType(StrEnum):
    TEXT = "text"
    TEXTAREA = "textarea"
    NUMBER = "number"
    SELECT = "select"
    CHECKBOX = "checkbox"
    RADIO = "radio"
    DATE = "date"
    EMAIL = "email"


# ``select`` and ``radio`` always carry options; ``checkbox`` may (a group).
CHOICE_TYPES = frozenset({FieldType.SELECT, FieldType.RADIO})


class Source(TypedDict):
    """The passage a part is based on: always one retrieved for this turn."""

    resource_id: str
    resource_title: str
    passage_id: str
    # Where the passage sits (contract v1.4); absent from replies stored before.
    page: NotRequired[int | None]
    bbox: NotRequired[list[float] | None]


class Part(TypedDict):
    text: str
    source: Source | None
    # The part's language (BCP 47) where it is not the reply's, the turn's
    # (contract v1.4): a passage quoted in its own language, so a client can
    # set the part's direction (chat/quoting.py).
    language: NotRequired[str]


class FormChoice(TypedDict):
    """An option with the value that identifies it (the label is what a person reads)."""

    value: str
    label: str


class FormField(TypedDict):
    name: str
    label: str
    type: str  # a FieldType value
    required: bool
    placeholder: NotRequired[str]
    # The options' labels: what a client shows, and may send back.
    options: NotRequired[list[str]]
    # The same options, in the same order, each with its value (the
    # "which one do you mean?" form's: the documents' ids): what a client sends back.
    choices: NotRequired[list[FormChoice]]


class Form(TypedDict):
    title: str
    fields: list[FormField]


class Reply(TypedDict):
    """``assistant_message.response``; stored as ``Message.response``."""

    type: str  # a ResponseType value
    parts: list[Part]
    form: Form | None


class InvalidCitation(TypedDict):
    """A citation the model made to a passage number outside this turn's list
    (dropped from the reply, kept on the message for review)."""

    part: int
    passage: object
    # "not_retrieved": the number was not in this turn's list; "from_user":
    # the part's words are the user's, not the cited passage's; "heading":
    # the part only repeats a heading of the cited passage (chat/headings.py).
    reason: NotRequired[str]


class RetrievedPassage(TypedDict):
    """A passage retrieved for a turn, as stored on the reply (``Message.retrieved``)."""

    passage_id: str
    resource_id: str
    score: float
    rank: int


class TracePassage(TypedDict):
    passage_id: str
    resource_id: str
    score: float
    # The passage's language (Passage.language); absent from traces stored before it was given.
    language: NotRequired[str]


class TraceBudget(TypedDict):
    """How the prompt was fitted: ``prompt_budget = context_length - max_tokens - margin``."""

    context_length: int
    max_tokens: int
    prompt_budget: int
    prompt_tokens: int | None


class TraceHistoryTurn(TypedDict):
    user_message_id: str
    assistant_message_id: str


class TraceDropped(TypedDict):
    """What the budget left out: lowest-ranked passages, oldest history turns."""

    passages: list[TracePassage]
    history: list[TraceHistoryTurn]
    truncated_passage_id: str | None


class PromptTrace(TypedDict):
    """``data.prompt_trace``: what the model was given, for admin keys."""

    passages: list[TracePassage]
    messages: list[ChatMessage]
    budget: NotRequired[TraceBudget]
    dropped: NotRequired[TraceDropped]
    retrieval_queries: NotRequired[list[str]]
    answerability: NotRequired[float | None]
    decision: NotRequired[str]
    # Why no answer or a form (DecisionReason; None otherwise), and the figures that decided it.
    reason: NotRequired[str | None]
    figures: NotRequired[dict[str, Any]]
    # Who may read what (retrieval.filters.Access.as_json): filters, groups, resource_ids.
    access: NotRequired[dict[str, Any]]
    # The subject in focus, when the turn was kept to one document:
    # {"resource_id", "from": "choice" | "previous_answer" | "named"}.
    subject: NotRequired[dict[str, str]]


class SessionRef(TypedDict):
    id: str
    title: str
    created: bool


class SessionData(TypedDict):
    id: str
    title: str
    external_user_id: str
    message_count: int
    created_at: str
    updated_at: str


class Provenance(TypedDict):
    """Which conversation produced a reply: the SHA-256 of the canonical JSON
    (sorted keys, no whitespace, UTF-8) of the exact messages sent to the model."""

    messages_hash: str


class GuardData(TypedDict):
    """What the workspace's output guard did to a reply (chat/output_guard.py)."""

    action: str  # "flag" | "block"
    rule_ids: list[str]


class Certificate(TypedDict):
    """A signed statement of a reply (chat/certificates.py)."""

    payload: str
    signature: str
    key_id: str
    alg: str


class MessageData(TypedDict):
    """A message in API shape; the assistant-only keys are absent on user messages."""

    id: str
    role: Literal["user", "assistant"]
    content: str
    response: NotRequired[Reply | None]
    grounding: NotRequired[str]
    model: NotRequired[str]
    degraded: NotRequired[bool]
    provenance: NotRequired[Provenance | None]
    guard: NotRequired[GuardData | None]
    certificate: NotRequired[Certificate]
    created_at: str


class ChatResult(TypedDict):
    """``data`` of ``POST …/chat/``."""

    session: SessionRef
    user_message: MessageData
    assistant_message: MessageData
    prompt_trace: NotRequired[PromptTrace]


class ErrorData(TypedDict):
    """The ``error`` object of the envelope (and of the stream's ``error`` event)."""

    code: str
    message: str
    # A chat error after the session was created names it.
    session_id: NotRequired[str]
