"""The playground page: ask as an end user would, see why the answer is what it is."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.views.decorators.http import require_http_methods

from console.forms import PlaygroundForm
from console.playground import PlaygroundTurn, playground_turn, playground_user_id
from console.views.common import USE_PLAYGROUND, page_context, workspace_view
from daneshyar.exceptions import ApplicationError
from retrieval.filters import Access
from retrieval.search.fusion import dense_weight
from workspaces.models import Workspace


@require_http_methods(["GET", "POST"])
@workspace_view(USE_PLAYGROUND)
def playground(request: HttpRequest, workspace: Workspace) -> HttpResponse:
    username = request.user.get_username()
    form = PlaygroundForm(workspace, data=request.POST if request.method == "POST" else None)
    turn: PlaygroundTurn | None = None
    error: ApplicationError | None = None
    status = 200
    if request.method == "POST":
        if not form.is_valid():
            status = 400
        else:
            data = form.cleaned_data
            try:
                turn = playground_turn(
                    username=username,
                    workspace=workspace,
                    question=data["question"],
                    resource_ids=[r.id for r in data["resources"]],
                    model=data["model"] or None,
                    label=data["label"],
                    session_id=data["session_id"],
                    access=Access(filters=data["filters"], groups=data["groups"]),
                )
            except ApplicationError as exc:
                error, status = exc, exc.status_code
            else:
                form = _next_form(request, workspace, data, turn)
    context = page_context(request, workspace, tab="playground", title=f"Playground: {workspace.name}")
    context.update(
        {
            "form": form,
            "turn": turn,
            "error": error,
            "end_user": playground_user_id(username, form["label"].value() or ""),
            "question": request.POST.get("question", "") if turn is not None else "",
            "dense_weight": dense_weight(workspace.embedding_model),
            "lexical_weight": round(1 - dense_weight(workspace.embedding_model), 3),
        }
    )
    return TemplateResponse(request, "console/playground.html", context, status=status)


def _next_form(
    request: HttpRequest, workspace: Workspace, data: dict[str, Any], turn: PlaygroundTurn
) -> PlaygroundForm:
    """The form after a turn: the next question continues this conversation
    unless the curator starts a new one."""
    return PlaygroundForm(
        workspace,
        initial={
            "resources": data["resources"],
            "model": data["model"],
            "label": data["label"],
            "session_id": turn.session.id,
            "filters": request.POST.get("filters", ""),
            "groups": request.POST.get("groups", ""),
        },
    )
