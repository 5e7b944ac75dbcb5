"""What kind of reply a turn gets, decided before generation.

- ``small_talk``: the message is only a greeting, thanks or a goodbye
  (``smalltalk.py``): the workspace's ``small_talk_text``, no retrieval.
- ``no_answer``: the documents don't say. The retrieved passages are scored
  sentence by sentence as the extractive engine scores them (the closeness
  of each sentence, or the heading above it, to the question — and to the
  question with the conversation for a follow-up); the best score is the
  turn's **answerability** (0..1). Below the workspace's
  ``answerability_threshold`` the reply is its ``no_answer_text``,
  ``grounding: none``, no sources — on every engine: a generative model is
  not called for a question its passages cannot answer.
- ``clarify`` (the extractive engine; a generative model is instructed to do
  the same): the evidence answers differently for distinct subjects, or the
  question points at a subject it never names (``clarify.py``): a form asking
  which one.
- ``answer``: everything else.

The threshold's default (0.38) was fitted on the MTRAG-UN development split
and checked on SciFact (``bench/conversation_quality.py``,
``bench/answer_quality.py``; docs/prompting.md has the figures).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from chat.answerability import Assessment, assess
from chat.output import ParsedReply, text_reply
from chat.services.turn import clarify
from chat.services.turn.history import TurnContext
from retrieval.search import ScoredPassage
from workspaces.models import Workspace


class Intent(StrEnum):
    ANSWER = "answer"
    NO_ANSWER = "no_answer"
    CLARIFY = "clarify"
    SMALL_TALK = "small_talk"


@dataclass(frozen=True)
class Decision:
    intent: Intent
    # The best sentence's score, clamped to 0..1; None when not assessed.
    answerability: float | None = None
    # The scored sentences, reused by the extractive engine's answer.
    assessment: Assessment | None = None
    # What the turn answers without generation (small talk, no answer, a form).
    reply: ParsedReply | None = None


def small_talk(workspace: Workspace) -> Decision:
    return Decision(Intent.SMALL_TALK, reply=text_reply(workspace.small_talk_text))


def no_answer(workspace: Workspace, answerability: float | None = None) -> Decision:
    return Decision(Intent.NO_ANSWER, answerability=answerability, reply=text_reply(workspace.no_answer_text))


def turn_decide(
    *,
    workspace: Workspace,
    context: TurnContext,
    passages: Sequence[ScoredPassage],
    scoring_context: str | None,
    may_clarify: bool,
) -> Decision:
    """The decision for a grounded turn whose passages were retrieved (rules above).

    ``scoring_context``: the question with the conversation, for a follow-up
    (sentences are scored against both); ``may_clarify``: the engine cannot
    ask back itself (the extractive engine).
    """
    if not passages:
        return no_answer(workspace, 0.0)
    assessment = assess(context.focus, passages, context=scoring_context)
    score = min(1.0, max(0.0, assessment.best))
    threshold = workspace.answerability_threshold
    if may_clarify and context.chosen is None:
        candidates = [
            clarify.Candidate(resource_id=c.resource_id, title=c.title, score=c.score, sentence=c.sentence)
            for c in assessment.per_document()
        ]
        asked = clarify.ambiguous(context.focus, context.earlier_questions, candidates, threshold=threshold)
        if asked:
            return Decision(
                Intent.CLARIFY,
                answerability=score,
                assessment=assessment,
                reply=clarify.clarification_reply(asked),
            )
    if score < threshold:
        return no_answer(workspace, score)
    return Decision(Intent.ANSWER, answerability=score, assessment=assessment)
