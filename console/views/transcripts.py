"""Search a workspace's transcripts and read one: parts with their sources,
feedback, each reply's outcome and the access its turn retrieved within."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from chat.models import CONSOLE_USER_PREFIX, Feedback, MessageRole
from chat.outcomes import reply_outcome
from chat.selectors import message_list, session_get, session_search
from console.dashboard import OUTCOME_STYLE, access_summary
from console.forms import TranscriptSearchForm
from console.views.common import VIEW_TRANSCRIPTS, page_context, workspace_view
from daneshyar.api import keyset_after, uuid_of
from workspaces.models import Workspace

PAGE_SIZE = 50


def _day_start(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time.min, tzinfo=dt.UTC)


@require_GET
@workspace_view(VIEW_TRANSCRIPTS)
def transcript_search(request: HttpRequest, workspace: Workspace) -> HttpResponse:
    form = TranscriptSearchForm(data=request.GET)
    context = page_context(request, workspace, tab="transcripts", title=f"Transcripts: {workspace.name}")
    context["form"] = form
    if not form.is_valid():
        context.update({"sessions": [], "next_url": None})
        return TemplateResponse(request, "console/transcripts.html", context, status=400)
    data = form.cleaned_data
    sessions = session_search(
        workspace=workspace,
        external_user_id=data["external_user_id"] or None,
        active_from=_day_start(data["date_from"]) if data["date_from"] else None,
        # "until" is inclusive of its day.
        active_until=_day_start(data["date_to"] + dt.timedelta(days=1)) if data["date_to"] else None,
        question=data["question"] or None,
        include_console=data["include_console"],
    )
    if data["cursor"] is not None:
        sessions = sessions.filter(keyset_after(("-updated_at", "-id"), data["cursor"]))
    page = list(sessions[: PAGE_SIZE + 1])
    next_url = None
    if len(page) > PAGE_SIZE:
        page = page[:PAGE_SIZE]
        last = page[-1]
        params = {key: request.GET.get(key, "") for key in request.GET if key != "cursor"}
        params["cursor"] = f"{last.updated_at.isoformat()}_{last.id}"
        next_url = "?" + urlencode(params)
    context.update({"sessions": page, "next_url": next_url, "console_prefix": CONSOLE_USER_PREFIX})
    return TemplateResponse(request, "console/transcripts.html", context)


def _passage_url(workspace: Workspace, part: dict[str, Any]) -> str | None:
    source = part.get("source")
    if not isinstance(source, dict):
        return None
    passage_id = uuid_of(source.get("passage_id"))
    if passage_id is None:
        return None
    try:
        return reverse("console:passage", args=[workspace.id, passage_id])
    except NoReverseMatch:
        return None


def _figures(figures: dict[str, Any] | None) -> str:
    """A reply's reason figures as the transcript shows them: "answerability
    0.214 · threshold 0.38" (floats to three places, lists joined)."""

    def shown(value: Any) -> str:
        if isinstance(value, float):
            return f"{round(value, 3):g}"
        if isinstance(value, list):
            return ", ".join(shown(v) for v in value)
        return str(value)

    return " · ".join(f"{name} {shown(value)}" for name, value in (figures or {}).items())


@require_GET
@workspace_view(VIEW_TRANSCRIPTS)
def transcript(request: HttpRequest, workspace: Workspace, session_id: Any) -> HttpResponse:
    session = session_get(
        workspace=workspace, session_id=session_id, external_user_id=None, include_console=True
    )
    rows = (
        message_list(session=session)
        .order_by("sequence")
        .annotate(outcome=reply_outcome())
        .prefetch_related(Prefetch("feedback", queryset=Feedback.objects.order_by("created_at", "id")))
    )
    messages = []
    for message in rows:
        assistant = message.role == MessageRole.ASSISTANT
        response: dict[str, Any] = message.response if isinstance(message.response, dict) else {}
        parts = [
            {"text": part.get("text", ""), "source": part.get("source"), "url": _passage_url(workspace, part)}
            for part in response.get("parts") or []
            if isinstance(part, dict)
        ]
        messages.append(
            {
                "message": message,
                "parts": parts,
                "form": response.get("form") if isinstance(response.get("form"), dict) else None,
                "outcome": OUTCOME_STYLE.get(message.outcome, (message.outcome, ""))  # type: ignore[attr-defined]
                if assistant
                else None,
                "feedback": list(message.feedback.all()),
                "access": access_summary(message.access) if assistant else None,
                "assistant": assistant,
                "reason": _figures(message.reason_figures) if assistant else "",
            }
        )
    context = page_context(request, workspace, tab="transcripts", title=f"Transcript: {session.title}")
    context.update({"session": session, "messages": messages})
    return TemplateResponse(request, "console/transcript.html", context)
