"""What became of a reply: the one classification of an assistant message's
outcome, used by the curation dashboard's counts, its list of answers to
look at, and the transcript views.

It is a database expression (``Case``), so that counting outcomes over a
month of turns is one aggregate query and never loads a reply. Each reply
has exactly one outcome; the first rule that matches wins:

1. ``fallback``: generation failed twice and the safe fallback answer was stored;
2. ``degraded``: generation was unavailable and the extractive engine answered;
3. ``form``: the reply asks back with a form (shown as "asked back");
4. ``small_talk``: a greeting or thanks answered with the workspace's
   small-talk text (``grounding`` "none", no answerability);
5. ``no_answer``: the documents don't say (``grounding`` "none"): a curator's
   sign of a missing document;
6. ``cited``: at least one part names a source passage;
7. ``no_citation``: an answer without any source (also every answer of a
   workspace with nothing ready: ``grounding`` tells those apart).

0. ``guard_blocked`` / ``guard_flagged``: the output guard blocked or
   flagged the reply (chat/output_guard.py) — what a curator looks at first.
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import BooleanField, Case, F, Func, Value, When

from chat.contract import ResponseType
from chat.models import Grounding, Message


class ReplyOutcome(models.TextChoices):
    GUARD_BLOCKED = "guard_blocked", "blocked by the guard"
    GUARD_FLAGGED = "guard_flagged", "flagged by the guard"
    FALLBACK = "fallback", "fallback"
    DEGRADED = "degraded", "degraded"
    FORM = "form", "asked back"
    SMALL_TALK = "small_talk", "small talk"
    NO_ANSWER = "no_answer", "no answer"
    CITED = "cited", "cited"
    NO_CITATION = "no_citation", "no citation"


class _JsonPathExists(Func):
    function = "jsonb_path_exists"
    template = "%(function)s(%(expressions)s::jsonpath)"
    output_field = BooleanField()


def cites_a_passage(prefix: str = "") -> _JsonPathExists:
    """True when one of the reply's parts names a source passage."""
    return _JsonPathExists(F(f"{prefix}response"), Value("$.parts[*].source.passage_id"))


def reply_outcome(prefix: str = "") -> Case:
    """The outcome of an assistant message, as an expression to annotate or
    group by; ``prefix`` leads from the queried model to the message (e.g.
    ``"message__"`` for feedback)."""
    rules: list[Any] = [
        # The output guard's outcomes come first (chat/output_guard.py).
        When(**{f"{prefix}guard__action": "block"}, then=Value(ReplyOutcome.GUARD_BLOCKED.value)),
        When(**{f"{prefix}guard__action": "flag"}, then=Value(ReplyOutcome.GUARD_FLAGGED.value)),
        When(**{f"{prefix}is_fallback": True}, then=Value(ReplyOutcome.FALLBACK.value)),
        When(**{f"{prefix}degraded": True}, then=Value(ReplyOutcome.DEGRADED.value)),
        When(**{f"{prefix}response__type": ResponseType.FORM.value}, then=Value(ReplyOutcome.FORM.value)),
        When(
            **{f"{prefix}grounding": Grounding.NONE.value, f"{prefix}answerability__isnull": True},
            then=Value(ReplyOutcome.SMALL_TALK.value),
        ),
        When(**{f"{prefix}grounding": Grounding.NONE.value}, then=Value(ReplyOutcome.NO_ANSWER.value)),
        When(cites_a_passage(prefix), then=Value(ReplyOutcome.CITED.value)),
    ]
    return Case(*rules, default=Value(ReplyOutcome.NO_CITATION.value), output_field=models.CharField())


def message_outcome(*, message: Message) -> ReplyOutcome:
    """One stored reply's outcome, by the same expression (one query): what
    a caller holding the reply reads, so that nobody classifies it again in
    Python."""
    found = Message.objects.filter(id=message.id).annotate(outcome=reply_outcome())
    return ReplyOutcome(found.values_list("outcome", flat=True).get())
