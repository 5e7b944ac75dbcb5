"""Reads for sessions and messages. Every query starts from the workspace and,
for end-user scoped keys, the ``external_user_id``: a session of another end
user (or another workspace) is a 404 exactly like a missing one."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence

from django.db.models import Exists, Expression, OuterRef, Q, QuerySet, Subquery

from chat.models import CONSOLE_USER_PREFIX, Message, MessageRole, Session
from chat.prompting import HistoryTurn
from daneshyar.api import uuid_or_404
from daneshyar.exceptions import NotFound
from resources.models import Resource
from retrieval.models import Passage
from workspaces.models import Workspace


def console_sessions_q(prefix: str = "") -> Q:
    """Sessions of playground end users; ``prefix`` leads from the queried
    model to the session (``"session__"`` for messages)."""
    return Q(**{f"{prefix}external_user_id__startswith": CONSOLE_USER_PREFIX})


def session_list(
    *, workspace: Workspace, external_user_id: str | None, include_console: bool = False
) -> QuerySet[Session]:
    """Sessions, most recently active first; all end users' when ``None``
    (the console's playground sessions only with ``include_console``)."""
    queryset = Session.objects.filter(workspace=workspace)
    if external_user_id is not None:
        queryset = queryset.filter(external_user_id=external_user_id)
    if not include_console:
        queryset = queryset.exclude(console_sessions_q())
    return queryset


def session_get(
    *,
    workspace: Workspace,
    session_id: uuid.UUID | str,
    external_user_id: str | None,
    include_console: bool = False,
) -> Session:
    """The session if it is in ``workspace`` (and belongs to ``external_user_id``
    when one is given; is no playground session unless ``include_console``);
    otherwise 404."""
    session_uuid = uuid_or_404(session_id)
    try:
        return session_list(
            workspace=workspace, external_user_id=external_user_id, include_console=include_console
        ).get(id=session_uuid)
    except Session.DoesNotExist:
        raise NotFound() from None


def session_search(
    *,
    workspace: Workspace,
    external_user_id: str | None = None,
    active_from: dt.datetime | None = None,
    active_until: dt.datetime | None = None,
    question: str | None = None,
    include_console: bool = False,
) -> QuerySet[Session]:
    """Sessions of the workspace, most recently active first, narrowed by end
    user, by activity within [``active_from``, ``active_until``) (sessions
    that were active at some point in the range: started before its end,
    last active after its start), and by text in one of the user's questions
    (case-insensitive substring)."""
    queryset = Session.objects.filter(workspace=workspace)
    if external_user_id:
        queryset = queryset.filter(external_user_id=external_user_id)
    elif not include_console:
        queryset = queryset.exclude(console_sessions_q())
    if active_from is not None:
        queryset = queryset.filter(updated_at__gte=active_from)
    if active_until is not None:
        queryset = queryset.filter(created_at__lt=active_until)
    if question:
        asked = Message.objects.filter(
            session_id=OuterRef("pk"), role=MessageRole.USER, content__icontains=question
        )
        queryset = queryset.filter(Exists(asked))
    return queryset.order_by("-updated_at", "-id")


def message_list(*, session: Session) -> QuerySet[Message]:
    return Message.objects.filter(session=session)


def message_sources(
    *,
    session: Session,
    message_id: uuid.UUID | str,
    resource_ids: Sequence[uuid.UUID] | None = None,
    readable: Expression | None = None,
) -> list[dict[str, object]]:
    """The passages an assistant message of ``session`` cites, in the order it
    first cites them: what a client shows when a citation is opened.

    A passage whose resource was deleted or re-ingested since is left out, and
    so is one outside ``resource_ids`` when given, or of a resource that
    ``readable`` (a boolean condition on the resource: an end user's groups,
    retrieval/filters.py) excludes. A message of another session, or a user
    message, is a 404.
    """
    message_uuid = uuid_or_404(message_id)
    response = (
        Message.objects.filter(session=session, id=message_uuid, role=MessageRole.ASSISTANT)
        .values_list("response", flat=True)
        .first()
    )
    if response is None:
        raise NotFound()
    cited = _cited_passages(response)
    passages = Passage.objects.filter(workspace_id=session.workspace_id, id__in=cited)
    if resource_ids is not None:
        passages = passages.filter(resource_id__in=resource_ids)
    found = {
        passage.id: passage
        for passage in passages.select_related("resource").only(
            "id", "text", "page", "bbox", "resource__id", "resource__title"
        )
    }
    if readable is not None:
        # A query of its own: the condition names the resources table unaliased.
        owners = {passage.resource.id for passage in found.values()}
        kept = set(Resource.objects.filter(readable, id__in=owners).values_list("id", flat=True))
        found = {pid: passage for pid, passage in found.items() if passage.resource.id in kept}
    return [_source(found[pid]) for pid in cited if pid in found]


def _source(passage: Passage) -> dict[str, object]:
    return {
        "passage_id": str(passage.id),
        "resource_id": str(passage.resource.id),
        "resource_title": passage.resource.title,
        "page": passage.page,
        "bbox": passage.bbox,
        "text": passage.text,
    }


def _cited_passages(response: object) -> list[uuid.UUID]:
    """The passages a stored reply cites, each once, in the order it cites them."""
    parts = response.get("parts", []) if isinstance(response, dict) else []
    cited: dict[uuid.UUID, None] = {}
    for part in parts:
        source = part.get("source") if isinstance(part, dict) else None
        if isinstance(source, dict) and isinstance(source.get("passage_id"), str):
            try:
                cited[uuid.UUID(source["passage_id"])] = None
            except ValueError:
                continue
    return list(cited)


def history_turns(*, session_id: uuid.UUID, before_sequence: int, turns: int) -> list[HistoryTurn]:
    """The last ``turns`` *completed* turns before ``before_sequence``, oldest first.

    A turn is a user message (even sequence 2k) and its reply (2k + 1). A user
    message without a reply (generation failed, or still running in a
    concurrent request) is left out: the model always sees strict
    user/assistant alternation, and a question the user never got an answer
    to is not presented as settled context.
    """
    if turns <= 0:
        return []
    # Each reply's question (sequence - 1) as subqueries: one round trip.
    question = Message.objects.filter(
        session_id=OuterRef("session_id"), role=MessageRole.USER, sequence=OuterRef("sequence") - 1
    ).order_by()  # Meta.ordering starts with "session": it would join the session table
    replies = list(
        Message.objects.filter(
            session_id=session_id, role=MessageRole.ASSISTANT, sequence__lt=before_sequence
        )
        .annotate(
            question_content=Subquery(question.values("content")[:1]),
            question_id=Subquery(question.values("id")[:1]),
        )
        .order_by("-sequence")
        .values_list("content", "id", "response", "question_content", "question_id")[:turns]
    )
    return history_turns_from(replies)


# A reply as :func:`history_turns_from` reads it: its content, id and
# response, its question's content and id (None when the question is gone).
HistoryRow = tuple[str, uuid.UUID, object, str | None, uuid.UUID | None]


def history_turns_from(replies: Sequence[HistoryRow]) -> list[HistoryTurn]:
    """Turns from replies read newest first (:func:`history_turns`, or the
    statement that stores a question, chat/services/messages.py), oldest first."""
    return [
        HistoryTurn(
            question=question_content,
            answer=content,
            question_id=question_id,
            answer_id=answer_id,
            cited=_cited(response),
            form_fields=_form_fields(response),
            form_options=_form_options(response),
        )
        for content, answer_id, response, question_content, question_id in reversed(replies)
        if question_id is not None and question_content is not None
    ]


def _form_fields(response: object) -> tuple[str, ...]:
    """The names of a stored form reply's fields; none for another reply."""
    form = response.get("form") if isinstance(response, dict) else None
    fields = form.get("fields") if isinstance(form, dict) else None
    if not isinstance(fields, list):
        return ()
    return tuple(f["name"] for f in fields if isinstance(f, dict) and isinstance(f.get("name"), str))


def _form_options(response: object) -> tuple[tuple[str, str], ...]:
    """The (value, label) options of a stored form of one field with options
    (the value empty where the field has no ``choices``); none for another reply."""
    form = response.get("form") if isinstance(response, dict) else None
    fields = form.get("fields") if isinstance(form, dict) else None
    if not isinstance(fields, list) or len(fields) != 1 or not isinstance(fields[0], dict):
        return ()
    choices = fields[0].get("choices")
    if isinstance(choices, list) and choices:
        pairs = [
            (c["value"], c["label"])
            for c in choices
            if isinstance(c, dict) and isinstance(c.get("value"), str) and isinstance(c.get("label"), str)
        ]
        return tuple(pairs) if len(pairs) == len(choices) else ()
    options = fields[0].get("options")
    if not isinstance(options, list):
        return ()
    return tuple(("", option) for option in options if isinstance(option, str))


def _cited(response: object) -> tuple[uuid.UUID, ...]:
    """The resources a stored reply cites, in the order it cites them."""
    parts = response.get("parts", []) if isinstance(response, dict) else []
    cited: dict[uuid.UUID, None] = {}
    for part in parts:
        source = part.get("source") if isinstance(part, dict) else None
        if isinstance(source, dict) and isinstance(source.get("resource_id"), str):
            try:
                cited[uuid.UUID(source["resource_id"])] = None
            except ValueError:
                continue
    return tuple(cited)
