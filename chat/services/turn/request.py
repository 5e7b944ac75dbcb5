"""What a turn is asked: built by each entrance from its own input shape.

The native chat and stream endpoints, the OpenAI-compatible endpoint and the
console playground each parse their request into a :class:`TurnRequest`;
:func:`chat.services.turn.turn_prepare` is the one way in.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chat.message_list import Conversation
from retrieval.filter_grammar import Filter
from retrieval.filters import Access
from workspaces.models import Workspace
from workspaces.principals import Principal


@dataclass(frozen=True)
class TurnResume:
    """What a turn that failed after storing its question stored: an
    Idempotency-Key retry answers that question instead of storing another.

    Kept between the two requests in the key's record
    (``IdempotencyRecord.resume``, JSON) for a day, so :meth:`from_json`
    also reads what earlier versions wrote there (``created`` as "1"/"0").
    """

    session_id: uuid.UUID
    question_id: uuid.UUID
    # Whether the failed turn started the session (the retry's reply says so too).
    session_created: bool

    def as_json(self) -> dict[str, Any]:
        return {
            "session_id": str(self.session_id),
            "question_id": str(self.question_id),
            "created": self.session_created,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> TurnResume | None:
        """What the key's record holds (None: nothing to resume)."""
        if data is None:
            return None
        created = data.get("created")
        return cls(
            session_id=uuid.UUID(str(data["session_id"])),
            question_id=uuid.UUID(str(data["question_id"])),
            session_created=created is True or created == "1",
        )


@dataclass(frozen=True)
class TurnRequest:
    # The API key, or the end user of an end-user token (never admin).
    principal: Principal
    workspace: Workspace
    external_user_id: str
    # The question, the earlier turns and the integrator's note (a
    # ``messages`` list, or a single ``message`` with neither).
    conversation: Conversation
    session_id: uuid.UUID | None = None
    # Search only these resources (empty: all of the workspace's); a repeated
    # id counts once.
    resource_ids: tuple[uuid.UUID, ...] = ()
    # Retrieve only from these resources (None: no limit): an end-user
    # token's resource_ids, set by turn_prepare from the principal
    # (chat/services/turn/scope.py). A filter, where resource_ids widen.
    allowed_resource_ids: tuple[uuid.UUID, ...] | None = None
    # The request's metadata filter and, on an API-key request, the end
    # user's groups (None: not sent) (retrieval/filters.py).
    filters: Filter | None = None
    groups: tuple[str, ...] | None = None
    # Who may read what in this turn: the filter, the groups (the token's or
    # the request's) and the token's resources, set by turn_prepare
    # (scope.py); every search of the turn is confined to it, in SQL.
    access: Access | None = None
    model: str | None = None
    include_prompt_trace: bool = False
    # Per-request generation options (the OpenAI-compatible endpoint's);
    # None: the backend's defaults.
    max_tokens: int | None = None
    temperature: float | None = None
    # Sign the reply (certificate: true on the request).
    certificate: bool = False
    # An Idempotency-Key retry of a turn that failed after storing its
    # question: what it stored (``turn_resume_data``).
    resume: TurnResume | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "resource_ids", tuple(dict.fromkeys(self.resource_ids)))

    @property
    def question(self) -> str:
        return self.conversation.question
