"""Admin console: browse sessions, read a transcript, export selected sessions.

Transcripts are records of what was said: everything here is read-only
(sessions may be deleted, as an operator honouring a deletion request would).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import Prefetch, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.utils import timezone

from chat.models import Feedback, Message, ReviewItem, Session
from chat.services.guard_policies import review_mark
from chat.transcripts.export import transcript_export_lines
from chat.transcripts.redaction import default_redactor
from workspaces.admin import OrganizationScopedAdmin, ScopedRelatedFilter


def _export_response(queryset: QuerySet[Session], *, redact: bool) -> StreamingHttpResponse:
    sessions = Session.objects.filter(pk__in=queryset.values("pk")).order_by("updated_at", "id")
    response = StreamingHttpResponse(
        transcript_export_lines(sessions=sessions, redactor=default_redactor if redact else None),
        content_type="application/x-ndjson; charset=utf-8",
    )
    suffix = "-redacted" if redact else ""
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    response["Content-Disposition"] = f'attachment; filename="transcripts-{stamp}{suffix}.ndjson"'
    response["Cache-Control"] = "no-store"
    return response


@admin.action(description="Export selected sessions as NDJSON")
def export_ndjson(
    modeladmin: SessionAdmin, request: HttpRequest, queryset: QuerySet[Session]
) -> HttpResponse:
    return _export_response(queryset, redact=False)


@admin.action(description="Export selected sessions as NDJSON, PII redacted")
def export_ndjson_redacted(
    modeladmin: SessionAdmin, request: HttpRequest, queryset: QuerySet[Session]
) -> HttpResponse:
    return _export_response(queryset, redact=True)


def transcript_context(session: Session) -> list[dict[str, Any]]:
    """The session's messages shaped for the transcript template, oldest first."""
    messages = session.messages.order_by("sequence").prefetch_related(
        Prefetch("feedback", queryset=Feedback.objects.order_by("created_at"))
    )
    out: list[dict[str, Any]] = []
    for message in messages:
        response = message.response if isinstance(message.response, dict) else {}
        parts = [p for p in response.get("parts") or [] if isinstance(p, dict)]
        form = response.get("form") if isinstance(response.get("form"), dict) else None
        out.append(
            {
                "message": message,
                "response_type": response.get("type", ""),
                "parts": parts,
                "form": form,
                "feedback": list(message.feedback.all()),
            }
        )
    return out


class ReadOnlyAdmin(OrganizationScopedAdmin):
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Session)
class SessionAdmin(ReadOnlyAdmin):
    organization_path = "workspace__organization"
    list_display = ["title", "external_user_id", "workspace", "message_count", "created_at", "updated_at"]
    list_filter = [
        ("workspace", ScopedRelatedFilter),
        ("workspace__organization", ScopedRelatedFilter),
        "updated_at",
        "created_at",
    ]
    # "=": exact match on the end user's id (an index lookup), plus title words.
    search_fields = ["=external_user_id", "title", "=id"]
    search_help_text = "An exact external_user_id or session id, or words of the title."
    date_hierarchy = "updated_at"
    list_select_related = ["workspace", "workspace__organization"]
    list_per_page = 50
    show_full_result_count = False
    actions = [export_ndjson, export_ndjson_redacted]
    fields = ["id", "workspace", "external_user_id", "title", "message_count", "created_at", "updated_at"]
    change_form_template = "admin/chat/session/transcript.html"

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        extra_context = dict(extra_context or {})
        session = self.get_object(request, unquote(object_id))
        if session is not None:
            extra_context["transcript"] = transcript_context(session)
            extra_context["title"] = f"Transcript: {session.title}"
        return super().change_view(request, object_id, form_url, extra_context)


@admin.register(Message)
class MessageAdmin(ReadOnlyAdmin):
    organization_path = "session__workspace__organization"
    list_display = ["session", "sequence", "role", "grounding", "model", "is_fallback", "created_at"]
    list_filter = ["role", "grounding", "is_fallback", "created_at"]
    search_fields = ["=session__id", "=id"]
    list_select_related = ["session"]
    show_full_result_count = False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Feedback)
class FeedbackAdmin(ReadOnlyAdmin):
    organization_path = "message__session__workspace__organization"
    list_display = ["message", "external_user_id", "rating", "comment", "updated_at"]
    list_filter = ["rating", "updated_at"]
    search_fields = ["=external_user_id", "=message__session__id"]
    list_select_related = ["message"]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(ReviewItem)
class ReviewQueueAdmin(ReadOnlyAdmin):
    """Replies the output guard flagged or blocked, per workspace, with the
    conversation around them; a reviewer marks them reviewed."""

    organization_path = "session__workspace__organization"
    list_display = ["created_at", "workspace", "excerpt", "guard_action", "review_status", "reviewed_by"]
    list_filter = [
        "review_status",
        ("session__workspace", ScopedRelatedFilter),
        ("session__workspace__organization", ScopedRelatedFilter),
    ]
    search_fields = ["=session__id", "=id", "content"]
    list_select_related = ["session", "session__workspace"]
    ordering = ["-created_at"]
    actions = ["mark_reviewed"]
    fields = ["id", "session", "model", "guard", "review_status", "reviewed_at", "reviewed_by", "created_at"]
    change_form_template = "admin/chat/reviewitem/review.html"

    def get_queryset(self, request: HttpRequest) -> QuerySet[ReviewItem]:
        return super().get_queryset(request).filter(guard__isnull=False)

    @admin.display(description="workspace")
    def workspace(self, obj: ReviewItem) -> str:
        return obj.session.workspace.name

    @admin.display(description="reply")
    def excerpt(self, obj: ReviewItem) -> str:
        original = obj.guard_original or {}
        text = str(original.get("content") or obj.content)
        return text if len(text) <= 120 else text[:119] + "…"

    @admin.display(description="guard")
    def guard_action(self, obj: ReviewItem) -> str:
        guard = obj.guard or {}
        return f"{guard.get('action', '')}: {', '.join(guard.get('rule_ids', []))}"

    def has_review_permission(self, request: HttpRequest) -> bool:
        """Marking replies reviewed changes them: the proxy model's change
        permission (a view-only account reads the queue, nothing more)."""
        return request.user.has_perm(f"{self.opts.app_label}.change_{self.opts.model_name}")

    @admin.action(description="Mark selected replies reviewed", permissions=["review"])
    def mark_reviewed(self, request: HttpRequest, queryset: QuerySet[ReviewItem]) -> None:
        count = review_mark(
            message_ids=list(queryset.values_list("id", flat=True)), reviewer=request.user.get_username()
        )
        self.message_user(request, f"Marked {count} reply(ies) reviewed.", messages.SUCCESS)

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        extra_context = dict(extra_context or {})
        item = self.get_object(request, unquote(object_id))
        if item is not None:
            if request.method == "POST" and "_mark_reviewed" in request.POST:
                if not self.has_review_permission(request):
                    raise PermissionDenied
                review_mark(message_ids=[item.id], reviewer=request.user.get_username())
                self.message_user(request, "Marked reviewed.", messages.SUCCESS)
                return HttpResponseRedirect(request.path)
            extra_context["item"] = item
            extra_context["can_review"] = self.has_review_permission(request)
            extra_context["transcript"] = transcript_context(item.session)
            extra_context["title"] = f"Reply to review: {item.session.title}"
        return super().change_view(request, object_id, form_url, extra_context)
