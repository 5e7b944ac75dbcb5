"""The playground: one chat turn through the API's own services, shown with
everything behind it.

A turn is ``chat.services.turn.turn_prepare`` + ``turn_complete`` with the
prompt trace, exactly as ``POST …/chat/`` with an admin key runs it, so what
the playground shows is what an integrator gets. The passages come from that
turn's retrieval (``retrieval.search.search``), each with its fused score and
the scores of the two legs behind it.

The exact prompt is shown only where the deployment enabled prompt traces
(``PROMPT_TRACE_ENABLED``); otherwise the page shows the answer, the
passages and the decision without it, and the turn runs without a trace.

The turn is stored like any other, in a session of the reserved end user
``console:<username>`` (or ``console:<username>:<label>`` for a second
persona), which the transcript export and the dashboard leave out unless
asked for.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.utils.safestring import SafeString

from chat.contract import PromptTrace, Reply
from chat.message_list import Conversation
from chat.models import CONSOLE_USER_PREFIX, Message, Session
from chat.services.turn import TurnRequest, turn_complete, turn_prepare
from console.dashboard import access_summary
from console.highlight import highlight_terms
from console.page_figures import PageFigure, page_figure
from retrieval.filters import OPEN, Access
from retrieval.search import ScoredPassage
from workspaces.models import ApiKey, ApiKeyScope, Workspace

LABEL_MAX_CHARS = 64
LABEL_PATTERN = re.compile(r"^[A-Za-z0-9_.@-]+$")


def playground_user_id(username: str, label: str = "") -> str:
    """The reserved end user a console user's playground turns are stored under."""
    base = f"{CONSOLE_USER_PREFIX}{username}"
    return f"{base}:{label}" if label else base


def console_principal(workspace: Workspace) -> ApiKey:
    """What the playground acts as: an admin key of the workspace's
    organization (so it may ask for the prompt trace where traces are on), never stored. The
    staff account's own access was checked before (console/views/common.py)."""
    return ApiKey(organization=workspace.organization, name="console", scope=ApiKeyScope.ADMIN)


@dataclass
class ShownPassage:
    number: int  # 1-based position in the prompt: what citations refer to
    passage: ScoredPassage
    text: SafeString  # escaped, the query's terms in <mark>
    in_prompt: bool = True
    cited_by: list[int] = field(default_factory=list)  # 1-based part numbers
    figure: PageFigure | None = None  # its page, the passage outlined


@dataclass(frozen=True)
class ShownPart:
    text: str
    passage_number: int | None
    passage_id: str | None
    resource_title: str | None


@dataclass
class PlaygroundTurn:
    session: Session
    session_created: bool
    reply: Message
    external_user_id: str
    passages: list[ShownPassage]
    parts: list[ShownPart]
    # The decision, scores and queries; its messages only when prompt_shown.
    trace: PromptTrace
    form: object | None
    prompt_shown: bool = True

    @property
    def access(self) -> str | None:
        """The access the turn retrieved within, in one line (its stored reply's)."""
        return access_summary(self.reply.access)


def playground_turn(
    *,
    username: str,
    workspace: Workspace,
    question: str,
    resource_ids: Sequence[uuid.UUID] = (),
    model: str | None = None,
    label: str = "",
    session_id: uuid.UUID | None = None,
    access: Access = OPEN,
) -> PlaygroundTurn:
    """Run and store one turn; raises the chat services' ``ApplicationError``s
    (400 too long, 404 session gone, 502/503 generation) like the API."""
    external_user_id = playground_user_id(username, label)
    prepared = turn_prepare(
        TurnRequest(
            principal=console_principal(workspace),
            workspace=workspace,
            external_user_id=external_user_id,
            conversation=Conversation.single(question),
            session_id=session_id,
            resource_ids=tuple(resource_ids),
            filters=access.filters,
            groups=access.groups,
            model=model,
            include_prompt_trace=settings.PROMPT_TRACE_ENABLED,
        )
    )
    reply = turn_complete(prepared)
    trace = prepared.trace(reply)
    if not settings.PROMPT_TRACE_ENABLED:
        trace["messages"] = []
    shown = _shown_passages(question, prepared.passages, prepared.retrieval.passages, workspace.id)
    response = reply.reply or {"type": "answer", "parts": [], "form": None}
    return PlaygroundTurn(
        session=prepared.question.session,
        session_created=prepared.question.created,
        reply=reply,
        external_user_id=external_user_id,
        passages=shown,
        parts=_shown_parts(response, shown),
        trace=trace,
        form=response.get("form"),
        prompt_shown=settings.PROMPT_TRACE_ENABLED,
    )


def _shown_passages(
    question: str,
    in_prompt: Sequence[ScoredPassage],
    retrieved: Sequence[ScoredPassage],
    workspace_id: uuid.UUID,
) -> list[ShownPassage]:
    """The passages of the prompt, numbered as the model saw them, then those
    retrieved but left out of the prompt by its budget; each with the
    question's terms highlighted and its page's figure."""
    in_prompt = list(in_prompt)
    prompt_ids = {p.passage_id for p in in_prompt}
    # Retrieved but left out of the prompt by its budget: shown after the others.
    left_out = [p for p in retrieved if p.passage_id not in prompt_ids]
    highlighted = highlight_terms(question, [p.text for p in in_prompt + left_out])
    return [
        ShownPassage(
            number=i,
            passage=p,
            text=text,
            in_prompt=i <= len(in_prompt),
            figure=page_figure(
                workspace_id=workspace_id, resource_id=p.resource_id, page=p.page, bbox=p.bbox
            ),
        )
        for i, (p, text) in enumerate(zip(in_prompt + left_out, highlighted, strict=True), start=1)
    ]


def _shown_parts(response: Reply, shown: list[ShownPassage]) -> list[ShownPart]:
    """The reply's parts, each with the number of the passage it cites (and
    that passage told it is cited)."""
    by_id = {str(s.passage.passage_id): s for s in shown if s.in_prompt}
    parts: list[ShownPart] = []
    for index, part in enumerate(response["parts"], start=1):
        source = part.get("source")
        target = by_id.get(source["passage_id"]) if source else None
        if target is not None:
            target.cited_by.append(index)
        parts.append(
            ShownPart(
                text=part["text"],
                passage_number=target.number if target is not None else None,
                passage_id=source["passage_id"] if source else None,
                resource_title=source["resource_title"] if source else None,
            )
        )
    return parts
