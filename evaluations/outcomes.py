"""What an evaluation reads of a stored reply: its outcome and its first
cited document.

The outcome is the analytics' one classification of a reply
(``chat.outcomes.reply_outcome``, the dashboard's counts, read from the
stored reply) told in the evaluation's four words, by one mapping:

======================================================  ==============
the reply's outcome (chat/outcomes.py)                  the evaluation
======================================================  ==============
``cited``: a part names a source passage                ``answered``
``no_answer``: the documents don't say                  ``abstained``
``form``: it asks back with a form                      ``asked``
any other (guard-blocked or -flagged, fallback,         ``other``
degraded, small talk, no citation)
======================================================  ==============

The analytics' rules run in their order, so a reply the guard caught is
``other`` even when it cites; and a reply asks back only with its form: a
question mark at the end of its text says nothing (a Persian or Arabic
question ends with "؟", a statement may quote a question).
"""

from __future__ import annotations

from chat.models import Message
from chat.outcomes import ReplyOutcome, message_outcome

ANSWERED = "answered"
ABSTAINED = "abstained"
ASKED = "asked"
OTHER = "other"

EVALUATED_AS: dict[ReplyOutcome, str] = {
    ReplyOutcome.CITED: ANSWERED,
    ReplyOutcome.NO_ANSWER: ABSTAINED,
    ReplyOutcome.FORM: ASKED,
}

# The choices of a result's ``outcome`` (EvaluationResult), each with the
# analytics' outcome it stands for.
OUTCOME_CHOICES = [
    (ANSWERED, "a part cites a source passage (the dashboard's cited)"),
    (ABSTAINED, "the documents don't say (the dashboard's no answer)"),
    (ASKED, "a form asking back (the dashboard's asked back)"),
    (OTHER, "any other: guard-blocked or -flagged, fallback, degraded, small talk, no citation"),
]


def evaluated_outcome(outcome: ReplyOutcome) -> str:
    """The evaluation's word for the analytics' ``outcome``."""
    return EVALUATED_AS.get(outcome, OTHER)


def reply_evaluated_outcome(reply: Message) -> str:
    """The stored ``reply``'s outcome, as an evaluation scores it (one query)."""
    return evaluated_outcome(message_outcome(message=reply))


def first_cited_resource(reply: Message) -> str | None:
    """The document of the reply's first cited part (None: it cites nothing)."""
    typed = reply.reply
    for part in typed.get("parts", []) if typed else []:
        source = part.get("source")
        if source:
            return str(source["resource_id"])
    return None
