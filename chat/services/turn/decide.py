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
  which one. When the evidence answers alike for distinct subjects but the
  question names a subject none of the retrieved documents covers ("How
  long is the dishwasher warranty?" over other appliances' manuals:
  ``naming.py``), the reply is ``no_answer`` instead, on every engine.
  So is it when one of them answers best: when the two best documents'
  best sentences say the same for their own subjects (counterparts,
  chat/backends/focus.py), the juicer's warranty is no answer to the
  dishwasher's, however far ahead its score (a model whose scores set one
  document apart, as multilingual-e5-small's may, would otherwise answer
  with it). Documents that say different things are left to the
  threshold: a question's wording ("the payment" over "paid", "what the
  agent said") may name what its source never writes.
- ``answer``: everything else. When the question names one of several
  documents that answer alike for their own subjects ("How often does the
  Brio need an oil change?" over three cars' booklets, the Brio's sentence
  not naming it: ``clarify.named_subject``), the turn answers from that
  document only (``Decision.subject``; the prompt trace's ``subject``,
  ``from: named``), its best sentence passing ``clarify.REFERENCE_FLOOR``:
  the counterpart of an answer that passed the threshold. So is the
  document the user chose in a form.

The replies are in the turn's language (``TurnContext.language``): the
workspace's own text for that language (``Workspace.texts``), else its
single ``no_answer_text`` / ``small_talk_text`` when changed from the
default, else the language's built-in text (chat/wording.py,
``workspace_language``).

Every no answer and every form carries its ``reason`` (one of
``chat.contract.DecisionReason``) and the ``figures`` that decided it, as
the prompt trace and an evaluation run's items show them (docs/api.md):
``no_documents`` (nothing ready in the workspace) or ``filtered_out`` (no
passage the turn may read), ``below_threshold`` (``answerability``,
``threshold``), ``uncovered_subject`` (the question's ``subject_words`` no
retrieved document has), ``parallel_candidates`` and
``unresolved_reference`` (a form: its ``candidates`` and their ``scores``,
and the pointing ``reference``). The extractive engine's own no answer,
when no sentence of passages above the threshold answers, is
``no_sentence`` (chat/services/turn/generate.py).

The threshold's default (0.38) was fitted on the MTRAG-UN development split
and checked on SciFact (``bench/conversation_quality.py``,
``bench/answer_quality.py``; docs/prompting.md has the figures).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from chat.answerability import Assessment, assess
from chat.backends.focus import counterparts
from chat.contract import DecisionReason
from chat.output import ParsedReply, text_reply
from chat.services.turn import clarify, naming
from chat.services.turn.history import TurnContext
from chat.services.turn.subjects import DocumentWords, document_words
from chat.wording import workspace_language
from languages import Language
from resources.selectors import ready_resources_exist
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
    # Why no answer or a form (None for an answer or small talk), and the
    # figures that decided it (rules above).
    reason: DecisionReason | None = None
    figures: Mapping[str, Any] = field(default_factory=dict)
    # The document the question names among several that answer alike for
    # their own subjects: the turn answers from it only (None: no such).
    subject: uuid.UUID | None = None


def no_answer_text(workspace: Workspace, language: Language) -> str:
    """The workspace's "the documents don't say" in ``language`` (order above)."""
    return workspace_language(workspace, language).texts.no_answer_text


def no_answer(
    workspace: Workspace,
    answerability: float | None,
    language: Language,
    *,
    reason: DecisionReason,
    figures: Mapping[str, Any],
) -> Decision:
    reply = text_reply(no_answer_text(workspace, language))
    return Decision(
        Intent.NO_ANSWER, answerability=answerability, reply=reply, reason=reason, figures=dict(figures)
    )


def turn_decide(
    *,
    workspace: Workspace,
    context: TurnContext,
    passages: Sequence[ScoredPassage],
    scoring_context: str | None,
    may_clarify: bool,
    deeper: Callable[[], Sequence[ScoredPassage]] | None = None,
    in_focus: bool = False,
) -> Decision:
    """The decision for a grounded turn whose passages were retrieved (rules above).

    ``scoring_context``: the question with the conversation, for a follow-up
    (sentences are scored against both); ``may_clarify``: the engine cannot
    ask back itself (the extractive engine); ``deeper``: the question's
    passages searched deeper, for a form to offer every document that
    answers alike rather than those among the retrieved few (called only
    when a form is offered); ``in_focus``: the turn is kept to a subject
    (retrieve.py): it neither asks which one nor looks for one named.
    """
    language = workspace_language(workspace, context.language)
    if not passages:
        ready = ready_resources_exist(workspace=workspace)
        reason = DecisionReason.FILTERED_OUT if ready else DecisionReason.NO_DOCUMENTS
        return no_answer(workspace, 0.0, language, reason=reason, figures={"passages": 0})
    assessment = assess(context.focus, passages, context=scoring_context, model=workspace.embedding_model)
    subject = None
    if context.chosen is None and not in_focus:
        candidates = _candidates(assessment)
        asked = _which_one(
            workspace=workspace,
            context=context,
            passages=passages,
            assessment=assessment,
            candidates=candidates,
            scoring_context=scoring_context,
            may_clarify=may_clarify,
            deeper=deeper,
        )
        if asked is not None:
            return asked
        subject, assessment = _named(workspace, context, candidates, passages, scoring_context, assessment)
    score = _answerability(assessment)
    named = subject is not None or context.chosen is not None  # its floor: rules above
    floor = clarify.REFERENCE_FLOOR if named else workspace.answerability_threshold
    if score < min(floor, workspace.answerability_threshold):
        figures = {"answerability": score, "threshold": workspace.answerability_threshold}
        return no_answer(workspace, score, language, reason=DecisionReason.BELOW_THRESHOLD, figures=figures)
    return Decision(Intent.ANSWER, answerability=score, assessment=assessment, subject=subject)


def _named(
    workspace: Workspace,
    context: TurnContext,
    candidates: Sequence[clarify.Candidate],
    passages: Sequence[ScoredPassage],
    scoring_context: str | None,
    assessment: Assessment,
) -> tuple[uuid.UUID | None, Assessment]:
    """The document the question names among those answering alike, and
    the turn's sentences scored from it only (``Decision.subject``); else
    none and ``assessment``."""
    named = clarify.named_subject(
        context.focus, context.earlier_questions, candidates, threshold=workspace.answerability_threshold
    )
    if named is None:
        return None, assessment
    own = [p for p in passages if p.resource_id == named.resource_id]
    model = workspace.embedding_model
    return named.resource_id, assess(context.focus, own, context=scoring_context, model=model)


def _which_one(
    *,
    workspace: Workspace,
    context: TurnContext,
    passages: Sequence[ScoredPassage],
    assessment: Assessment,
    candidates: list[clarify.Candidate],
    scoring_context: str | None,
    may_clarify: bool,
    deeper: Callable[[], Sequence[ScoredPassage]] | None,
) -> Decision | None:
    """Before the user chose a subject: a form asking which one, or no
    answer for a subject none of the documents covers (rules above); None
    when the turn is neither (the threshold decides)."""
    language = workspace_language(workspace, context.language)
    score = _answerability(assessment)
    threshold = workspace.answerability_threshold
    asked = clarify.ambiguous(
        context.focus, context.earlier_questions, candidates, threshold=threshold, language=language
    )
    figures: dict[str, Any] = {"answerability": score, "threshold": threshold}
    if asked:
        uncovered = naming.uncovered_subject(context.focus, context.earlier_questions, language, passages)
        if uncovered:
            return _uncovered(workspace, language, uncovered, asked, figures)
    if asked and may_clarify:
        why, found = clarify.ask_reason(context.focus, context.earlier_questions, candidates, language)
        if deeper is not None:
            asked = _every_candidate(
                asked, context, deeper(), scoring_context, workspace=workspace, language=language
            )
        reply = clarify.clarification_reply(asked, language)
        figures |= {"candidates": len(asked), "scores": [c.score for c in asked], **found}
        return Decision(Intent.CLARIFY, score, assessment, reply, reason=why, figures=figures)
    # Documents answer alike, each for its own subject, none for the one named.
    answering = [candidate for candidate in candidates if candidate.score >= threshold]
    if len(answering) >= 2 and counterparts(answering[0].sentence, answering[1].sentence):
        uncovered = naming.uncovered_subject(context.focus, context.earlier_questions, language, passages)
        if uncovered:
            return _uncovered(workspace, language, uncovered, answering, figures)
    return None


def _uncovered(
    workspace: Workspace,
    language: Language,
    words: frozenset[str],
    candidates: Sequence[clarify.Candidate],
    figures: Mapping[str, Any],
) -> Decision:
    """No answer: the question names ``words`` (its subject) that none of
    the documents answering alike (``candidates``) covers."""
    figures = {
        "subject_words": sorted(words),
        "candidates": len(candidates),
        "scores": [c.score for c in candidates],
        **figures,
    }
    score = figures["answerability"]
    return no_answer(workspace, score, language, reason=DecisionReason.UNCOVERED_SUBJECT, figures=figures)


def _answerability(assessment: Assessment) -> float:
    """The turn's answerability: the best sentence's score, clamped to 0..1."""
    return min(1.0, max(0.0, assessment.best))


def _candidates(assessment: Assessment) -> list[clarify.Candidate]:
    """Each document's best sentence, best first, as a form's candidate,
    with its own naming words and its shape (subjects.py)."""
    best = assessment.per_document()
    words = document_words(c.resource_id for c in best if c.score >= clarify.REFERENCE_FLOOR)
    return [
        clarify.Candidate(
            resource_id=c.resource_id,
            title=c.title,
            score=c.score,
            sentence=c.sentence,
            words=words.get(c.resource_id, DocumentWords()),
        )
        for c in best
    ]


def _every_candidate(
    asked: list[clarify.Candidate],
    context: TurnContext,
    passages: Sequence[ScoredPassage],
    scoring_context: str | None,
    *,
    workspace: Workspace,
    language: Language,
) -> list[clarify.Candidate]:
    """The form's candidates found again among ``passages`` (the question
    searched deeper): every document that answers alike, when they hold the
    ones ``asked`` already; otherwise ``asked``."""
    assessment = assess(context.focus, passages, context=scoring_context, model=workspace.embedding_model)
    wider = clarify.ambiguous(
        context.focus,
        context.earlier_questions,
        _candidates(assessment),
        threshold=workspace.answerability_threshold,
        language=language,
    )
    held = {c.resource_id for c in wider}
    return wider if all(c.resource_id in held for c in asked) else asked
