"""What a turn is asked: built by each entrance from its own input shape.

The native chat and stream endpoints, the OpenAI-compatible endpoint and the
console playground each parse their request into a :class:`TurnRequest`;
:func:`chat.services.turn.turn_prepare` is the one way in.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from chat.conversation import Conversation
from workspaces.models import Workspace
from workspaces.principals import Principal


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
    resume: dict[str, str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "resource_ids", tuple(dict.fromkeys(self.resource_ids)))

    @property
    def question(self) -> str:
        return self.conversation.question
