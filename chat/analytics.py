"""Reads that summarise a workspace's conversations over a window of time:
the curation dashboard's figures (console/).

Every function is a fixed number of aggregate queries, whatever the number
of sessions or messages (tests/console/test_dashboard.py counts them). A
reply is an assistant message the service produced: the assistant turns an
integrator supplied as history in ``messages`` are not replies. The
playground's sessions (``console:`` end users) are left out unless
``include_console``.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import TruncDate
from psycopg import sql

from chat.models import Feedback, FeedbackRating, Message, MessageRole
from chat.outcomes import ReplyOutcome, reply_outcome
from chat.selectors import console_sessions_q
from chat.services.messages import CLIENT_MODEL
from workspaces.models import Workspace


@dataclass(frozen=True)
class Window:
    workspace: Workspace
    since: dt.datetime
    include_console: bool = False


def reply_list(window: Window) -> QuerySet[Message]:
    """The replies of the window (assistant messages produced by the service)."""
    queryset = Message.objects.filter(
        session__workspace=window.workspace, role=MessageRole.ASSISTANT, created_at__gte=window.since
    ).exclude(model=CLIENT_MODEL)
    if not window.include_console:
        queryset = queryset.exclude(console_sessions_q("session__"))
    return queryset


def replies_per_day(window: Window) -> dict[dt.date, int]:
    """Replies (turns) per calendar day (UTC); days without any are absent."""
    rows = (
        reply_list(window)
        .annotate(day=TruncDate("created_at"))
        .order_by()
        .values("day")
        .annotate(replies=Count("id"))
    )
    return {row["day"]: row["replies"] for row in rows}


@dataclass
class ReplyBreakdown:
    total: int = 0
    by_outcome: dict[str, int] = field(default_factory=dict)
    by_grounding: dict[str, int] = field(default_factory=dict)


def reply_breakdown(window: Window) -> ReplyBreakdown:
    """Replies counted by outcome (chat/outcomes.py) and by grounding, in one query."""
    rows = (
        reply_list(window)
        .annotate(outcome=reply_outcome())
        .order_by()
        .values("outcome", "grounding")
        .annotate(replies=Count("id"))
    )
    breakdown = ReplyBreakdown(by_outcome={outcome.value: 0 for outcome in ReplyOutcome})
    for row in rows:
        breakdown.total += row["replies"]
        breakdown.by_outcome[row["outcome"]] = breakdown.by_outcome.get(row["outcome"], 0) + row["replies"]
        grounding = row["grounding"] or "none"
        breakdown.by_grounding[grounding] = breakdown.by_grounding.get(grounding, 0) + row["replies"]
    return breakdown


def feedback_per_day(window: Window) -> dict[dt.date, dict[str, int]]:
    """Ratings per day of their last change (a repeated rating replaces the
    earlier one), by rating; days without any are absent."""
    queryset = Feedback.objects.filter(
        message__session__workspace=window.workspace, updated_at__gte=window.since
    )
    if not window.include_console:
        queryset = queryset.exclude(console_sessions_q("message__session__"))
    rows = (
        queryset.annotate(day=TruncDate("updated_at"))
        .order_by()
        .values("day", "rating")
        .annotate(ratings=Count("id"))
    )
    out: dict[dt.date, dict[str, int]] = {}
    for row in rows:
        out.setdefault(row["day"], {rating.value: 0 for rating in FeedbackRating})[row["rating"]] = row[
            "ratings"
        ]
    return out


@dataclass(frozen=True)
class CitedResource:
    resource_id: uuid.UUID
    # The title the citations carried (the resource may since be deleted).
    title: str
    replies: int


_CITED = """
    SELECT part -> 'source' ->> 'resource_id' AS resource_id,
           max(part -> 'source' ->> 'resource_title') AS title,
           count(DISTINCT reply.id) AS replies
    FROM ({replies}) AS reply
    CROSS JOIN LATERAL jsonb_array_elements(
        CASE WHEN jsonb_typeof(reply.response -> 'parts') = 'array'
             THEN reply.response -> 'parts' ELSE '[]'::jsonb END
    ) AS part
    WHERE jsonb_typeof(part -> 'source') = 'object'
      AND part -> 'source' ->> 'resource_id' IS NOT NULL
    GROUP BY 1
    ORDER BY replies DESC, 1
"""


def cited_resources(window: Window) -> list[CitedResource]:
    """Every resource cited in the window, with the number of replies citing
    it, most cited first (one query; ties by id)."""
    replies_sql, params = reply_list(window).order_by().values("id", "response").query.sql_with_params()
    # The replies' query is Django's own, its parameters bound with it below.
    statement = sql.SQL(_CITED).format(replies=sql.SQL(replies_sql)).as_string()
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        rows = cursor.fetchall()
    out: list[CitedResource] = []
    for resource_id, title, replies in rows:
        try:
            out.append(CitedResource(uuid.UUID(resource_id), title or "", int(replies)))
        except ValueError:
            continue  # not a resource id: nothing to link to
    return out


@dataclass(frozen=True)
class ReplyToReview:
    message_id: uuid.UUID
    session_id: uuid.UUID
    session_title: str
    external_user_id: str
    question: str
    outcome: str
    disliked: bool
    created_at: dt.datetime
    # What the turn could read from (Message.access); None: not recorded.
    access: dict[str, Any] | None = None


# The outcomes a curator should look at: the documents did not back the
# answer, or did not answer at all (a missing document, most often).
UNCITED_OUTCOMES = (ReplyOutcome.NO_CITATION.value, ReplyOutcome.FALLBACK.value, ReplyOutcome.NO_ANSWER.value)
# And the replies that asked back with a form: a question the documents
# should have answered outright is a test item in the making (console
# "Add to test set").
REVIEW_OUTCOMES = (*UNCITED_OUTCOMES, ReplyOutcome.FORM.value)


def replies_to_review(window: Window, *, limit: int = 10) -> list[ReplyToReview]:
    """The latest replies that got negative feedback, no citation, no answer or asked back, with
    their question (one query)."""
    disliked = Feedback.objects.filter(message_id=OuterRef("pk"), rating=FeedbackRating.DOWN)
    question = Message.objects.filter(
        session_id=OuterRef("session_id"), sequence=OuterRef("sequence") - 1, role=MessageRole.USER
    ).values("content")[:1]
    rows = (
        reply_list(window)
        .annotate(outcome=reply_outcome(), disliked=Exists(disliked), question=Subquery(question))
        .filter(Q(disliked=True) | Q(outcome__in=REVIEW_OUTCOMES))
        .select_related("session")
        .order_by("-created_at", "-id")[:limit]
    )
    return [
        ReplyToReview(
            message_id=row.id,
            session_id=row.session_id,
            session_title=row.session.title,
            external_user_id=row.session.external_user_id,
            question=row.question or "",  # type: ignore[attr-defined]
            outcome=row.outcome,  # type: ignore[attr-defined]
            disliked=row.disliked,  # type: ignore[attr-defined]
            created_at=row.created_at,
            access=row.access,
        )
        for row in rows
    ]
