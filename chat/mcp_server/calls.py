"""What each MCP tool does, through the services the REST routes use: the
search service, the chat turn, the resource and passage selectors. Who may
read what is decided once per call by the turn's own rule
(chat/services/turn/scope.py: the request's filters and groups, an
end-user token's groups and resources, which a call cannot widen), as
one SQL condition on the documents, so a tool fails closed exactly like
``POST …/search/``: nothing readable is an empty list or a 404."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from rest_framework.request import Request

from chat.message_list import Conversation
from chat.serializers import session_summary
from chat.services.turn import (
    TurnRequest,
    TurnResume,
    reply_data,
    turn_complete,
    turn_prepare,
    turn_resume_data,
)
from chat.services.turn.scope import turn_access
from daneshyar.api import keyset_page, timestamp
from daneshyar.exceptions import NotFound
from resources.models import Resource
from resources.selectors import resource_list
from retrieval.filters import Access, access_expression
from retrieval.models import Passage
from retrieval.search import search
from retrieval.selectors import passage_get, passage_list
from retrieval.serializers import access_of
from workspaces.idempotency import idempotency_stored, request_claim
from workspaces.models import Workspace
from workspaces.principals import Principal
from workspaces.ratelimit import rate_limit_turn


@dataclass(frozen=True)
class Caller:
    """Who calls the tools of one HTTP request: its key or end user, the
    workspace of the URL (both resolved by ``WorkspaceApi``), and the
    request itself (the rate limits record what they counted on it)."""

    principal: Principal
    workspace: Workspace
    request: Request


def _access(caller: Caller, args: dict[str, Any], requested: tuple[uuid.UUID, ...] = ()) -> Access:
    return turn_access(
        principal=caller.principal,
        workspace=caller.workspace,
        requested=requested,
        filters=args.get("filters"),
        groups=args.get("groups"),
    )


def _parsed(args: dict[str, Any]) -> dict[str, Any]:
    """``filters`` and ``groups`` parsed as search and chat parse them."""
    parsed = access_of(args)
    return {**args, "filters": parsed.filters, "groups": parsed.groups}


def readable_resources(caller: Caller, access: Access) -> QuerySet[Resource]:
    """The workspace's documents that ``access`` lets the caller read."""
    queryset = resource_list(workspace=caller.workspace)
    expression = access_expression(access, table=Resource._meta.db_table)
    return queryset if expression is None else queryset.filter(expression)


def search_call(caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    args = _parsed(args)
    requested = tuple(args.get("resource_ids") or ())
    access = _access(caller, args, requested)
    results = search(
        workspace=caller.workspace,
        query=args["query"],
        resource_ids=list(requested) or None,
        top_k=args.get("top_k"),
        access=access,
    )
    metadata = dict(
        resource_list(workspace=caller.workspace)
        .filter(id__in={r.resource_id for r in results})
        .values_list("id", "metadata")
    )
    items = [
        {
            "passage_id": str(r.passage_id),
            "resource_id": str(r.resource_id),
            "title": r.resource_title,
            "text": r.text,
            "page": r.page,
            "bbox": r.bbox,
            "score": r.score,
            "rank": r.rank,
            "metadata": metadata.get(r.resource_id, {}),
        }
        for r in results
    ]
    return {"items": items}


def answer_call(caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    """One chat turn (rate limits of a turn, as ``POST …/chat/``), answered
    at once. With an ``Idempotency-Key`` (chat/mcp_server/apis.py), as on
    that route: once the question is stored, a retry of a turn that failed
    answers it rather than storing another."""
    args = _parsed(args)
    principal = caller.principal
    end_user = args["external_user_id"]  # a token's own (with_end_user, before the arguments are checked)
    rate_limit_turn(caller.request, principal=principal, workspace=caller.workspace, end_user=end_user)
    prepared = turn_prepare(
        TurnRequest(
            principal=principal,
            workspace=caller.workspace,
            external_user_id=end_user,
            conversation=Conversation.single(args["message"]),
            session_id=args.get("session_id"),
            resource_ids=tuple(args.get("resource_ids") or ()),
            filters=args["filters"],
            groups=args["groups"],
            certificate=args["certificate"],
            resume=TurnResume.from_json(request_claim(caller.request).resume),
        )
    )
    question = prepared.question
    stored = idempotency_stored(
        caller.request,
        external_user_id=end_user,
        session_id=question.session.id,
        resume=turn_resume_data(prepared),
    )
    with stored:
        reply = turn_complete(prepared)
    return {
        "session": session_summary(question.session, created=question.created),
        "assistant_message": reply_data(prepared, reply),
    }


def list_documents_call(caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    args = _parsed(args)
    queryset = readable_resources(caller, _access(caller, args))
    rows, next_cursor = keyset_page(
        queryset, ordering=("created_at", "id"), limit=args["limit"], cursor=args.get("cursor") or None
    )
    items = [
        {
            "id": str(r.id),
            "title": r.title,
            "filename": r.filename,
            "content_type": r.content_type,
            "status": r.status,
            "passage_count": r.passage_count,
            "metadata": r.metadata,
            "created_at": timestamp(r.created_at),
        }
        for r in rows
    ]
    return {"items": items, "next_cursor": next_cursor}


def _passage(passage: Passage, title: str) -> dict[str, Any]:
    return {
        "passage_id": str(passage.id),
        "resource_id": str(passage.resource_id),
        "title": title,
        "ordinal": passage.ordinal,
        "page": passage.page,
        "bbox": passage.bbox,
        "text": passage.text,
    }


def read_passage_call(caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    """The passage and its neighbours; a passage of a document the caller
    may not read is 404, as one that does not exist."""
    args = _parsed(args)
    passage = passage_get(workspace=caller.workspace, passage_id=args["passage_id"])
    if not readable_resources(caller, _access(caller, args)).filter(id=passage.resource_id).exists():
        raise NotFound()
    resource = passage.resource
    around = args["neighbours"]
    nearby = passage_list(resource=resource).filter(
        ordinal__gte=passage.ordinal - around, ordinal__lte=passage.ordinal + around
    )
    rows = sorted(nearby, key=lambda p: p.ordinal)
    return {
        "passage": _passage(passage, resource.title),
        "before": [_passage(p, resource.title) for p in rows if p.ordinal < passage.ordinal],
        "after": [_passage(p, resource.title) for p in rows if p.ordinal > passage.ordinal],
    }


CALLS: dict[str, Callable[[Caller, dict[str, Any]], dict[str, Any]]] = {
    "search": search_call,
    "answer": answer_call,
    "list_documents": list_documents_call,
    "read_passage": read_passage_call,
}
