"""A workspace's last 30 days, as a curator reads them: how much is asked,
how the answers turn out, what users think of them, which documents carry
the answers and which never do, and the latest answers to look at.

A fixed number of queries whatever the number of sessions
(tests/console/test_dashboard.py): the figures are aggregates from
``chat.analytics``, the resources come from ``resources.selectors``.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import SafeString

from chat import analytics
from chat.models import FeedbackRating, Grounding
from chat.outcomes import ReplyOutcome
from console.charts import Bar, bar_list, column_chart, diverging_columns, legend
from resources.models import Resource, ResourceStatus
from resources.selectors import resource_list
from workspaces.models import Workspace

WINDOW_DAYS = 30
TOP_RESOURCES = 10
NEVER_CITED_SHOWN = 20
REVIEW_SHOWN = 10

# Outcome -> (label, tone), in the order a curator reads them.
OUTCOME_STYLE: dict[str, tuple[str, str]] = {
    ReplyOutcome.CITED.value: ("cited", "good"),
    ReplyOutcome.NO_CITATION.value: ("no citation", "warn"),
    ReplyOutcome.NO_ANSWER.value: ("no answer", "warn"),
    ReplyOutcome.FORM.value: ("asked back", "info"),
    ReplyOutcome.SMALL_TALK.value: ("small talk", "muted"),
    ReplyOutcome.DEGRADED.value: ("degraded", "muted"),
    ReplyOutcome.FALLBACK.value: ("fallback", "bad"),
    ReplyOutcome.GUARD_FLAGGED.value: ("guard-flagged", "warn"),
    ReplyOutcome.GUARD_BLOCKED.value: ("guard-blocked", "bad"),
}
GROUNDING_STYLE: dict[str, tuple[str, str]] = {
    Grounding.DOCUMENTS.value: ("documents", "good"),
    Grounding.GENERAL_KNOWLEDGE.value: ("general knowledge", "warn"),
    Grounding.NONE.value: ("none", "muted"),
}


def access_summary(access: Any) -> str | None:
    """A reply's stored access (``Message.access``: the filters, groups and
    token resources its turn retrieved within) in one line for a curator;
    None when it was not recorded (a reply the integrator supplied, or one
    stored before it was)."""
    if not isinstance(access, dict):
        return None
    pieces: list[str] = []
    filters, groups, resources = (access.get(k) for k in ("filters", "groups", "resource_ids"))
    if filters is not None:
        pieces.append(
            "filters " + json.dumps(filters, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        )
    if isinstance(groups, list):
        pieces.append(
            "groups " + ", ".join(map(str, groups)) if groups else "no groups (open documents only)"
        )
    if isinstance(resources, list):
        pieces.append(f"{len(resources)} token resource{'s' if len(resources) != 1 else ''}")
    return " · ".join(pieces) or "every document"


@dataclass(frozen=True)
class ReviewRow:
    item: analytics.ReplyToReview
    url: str
    outcome_label: str
    access: str | None = None


@dataclass
class Dashboard:
    since: dt.date
    until: dt.date
    include_console: bool
    replies: int
    turns_chart: SafeString
    outcome_chart: SafeString
    grounding_chart: SafeString
    feedback_chart: SafeString
    feedback_legend: SafeString
    feedback_totals: dict[str, int]
    cited_chart: SafeString
    never_cited: list[Resource]
    never_cited_count: int
    review: list[ReviewRow]


def workspace_dashboard(
    *, workspace: Workspace, include_console: bool = False, today: dt.date | None = None
) -> Dashboard:
    today = today or timezone.now().astimezone(dt.UTC).date()
    days = [today - dt.timedelta(days=WINDOW_DAYS - 1 - i) for i in range(WINDOW_DAYS)]
    since = dt.datetime.combine(days[0], dt.time.min, tzinfo=dt.UTC)
    window = analytics.Window(workspace=workspace, since=since, include_console=include_console)

    per_day = analytics.replies_per_day(window)
    turns_chart = column_chart(
        [Bar(day.isoformat(), per_day.get(day, 0)) for day in days], title="Turns per day"
    )
    breakdown = analytics.reply_breakdown(window)
    feedback = _feedback(window, days)
    cited = _cited(window, workspace)
    return Dashboard(
        since=days[0],
        until=today,
        include_console=include_console,
        replies=breakdown.total,
        turns_chart=turns_chart,
        outcome_chart=_outcome_chart(breakdown),
        grounding_chart=_grounding_chart(breakdown),
        feedback_chart=feedback.chart,
        feedback_legend=feedback.legend,
        feedback_totals=feedback.totals,
        cited_chart=cited.chart,
        never_cited=cited.never_cited,
        never_cited_count=cited.never_cited_count,
        review=_review(window, workspace),
    )


def _outcome_chart(breakdown: analytics.ReplyBreakdown) -> SafeString:
    # Every outcome chat/outcomes.py knows, those styled here first.
    outcomes = list(OUTCOME_STYLE) + [o.value for o in ReplyOutcome if o.value not in OUTCOME_STYLE]
    return bar_list(
        [
            Bar(label, breakdown.by_outcome.get(outcome, 0), tone=tone)
            for outcome in outcomes
            for label, tone in [OUTCOME_STYLE.get(outcome, (outcome.replace("_", " "), "muted"))]
        ],
        title="Answers by outcome",
    )


def _grounding_chart(breakdown: analytics.ReplyBreakdown) -> SafeString:
    return bar_list(
        [
            Bar(label, breakdown.by_grounding.get(grounding, 0), tone=tone)
            for grounding, (label, tone) in GROUNDING_STYLE.items()
        ],
        title="Answers by grounding",
    )


@dataclass(frozen=True)
class _Feedback:
    chart: SafeString
    legend: SafeString
    totals: dict[str, int]


def _feedback(window: analytics.Window, days: list[dt.date]) -> _Feedback:
    feedback = analytics.feedback_per_day(window)
    up = [feedback.get(day, {}).get(FeedbackRating.UP, 0) for day in days]
    down = [feedback.get(day, {}).get(FeedbackRating.DOWN, 0) for day in days]
    totals = {FeedbackRating.UP.value: sum(up), FeedbackRating.DOWN.value: sum(down)}
    chart = diverging_columns(
        [day.isoformat() for day in days], up, down, title="Feedback per day: up above, down below"
    )
    legend_html = legend([("up", "up", totals["up"]), ("down", "down", totals["down"])])
    return _Feedback(chart=chart, legend=legend_html, totals=totals)


@dataclass(frozen=True)
class _Cited:
    chart: SafeString
    never_cited: list[Resource]
    never_cited_count: int


def _cited(window: analytics.Window, workspace: Workspace) -> _Cited:
    """The most-cited resources (deleted ones muted), and the ready ones never cited."""
    cited = analytics.cited_resources(window)
    top = cited[:TOP_RESOURCES]
    present = dict(
        resource_list(workspace=workspace)
        .filter(id__in=[c.resource_id for c in top])
        .values_list("id", "title")
    )
    chart = bar_list(
        [
            Bar(
                present.get(c.resource_id) or f"{c.title or c.resource_id} (deleted)",
                c.replies,
                tone="good" if c.resource_id in present else "muted",
                href=reverse("admin:resources_resource_change", args=[c.resource_id])
                if c.resource_id in present
                else None,
            )
            for c in top
        ],
        title="Most-cited resources (answers citing each)",
    )
    never = resource_list(workspace=workspace, status=ResourceStatus.READY).exclude(
        id__in=[c.resource_id for c in cited]
    )
    never_rows = list(never.order_by("created_at", "id")[:NEVER_CITED_SHOWN])
    never_count = len(never_rows) if len(never_rows) < NEVER_CITED_SHOWN else never.count()
    return _Cited(chart=chart, never_cited=never_rows, never_cited_count=never_count)


def _review(window: analytics.Window, workspace: Workspace) -> list[ReviewRow]:
    return [
        ReviewRow(
            item=item,
            url=reverse("console:transcript", args=[workspace.id, item.session_id])
            + f"#message-{item.message_id}",
            outcome_label=OUTCOME_STYLE.get(item.outcome, (item.outcome, ""))[0],
            access=access_summary(item.access),
        )
        for item in analytics.replies_to_review(window, limit=REVIEW_SHOWN)
    ]
