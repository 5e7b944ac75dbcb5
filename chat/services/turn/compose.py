"""A turn's prompt: the messages that fit the model's window, and the
prepared turn that carries them to generation (with its prompt trace)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from chat.backends import Backend, ChatMessage
from chat.backends.base import JsonSchema
from chat.contract import DecisionReason, PromptTrace, TracePassage
from chat.message_list import messages_hash
from chat.models import Grounding, Message
from chat.output import output_schema
from chat.output_guard import Policy
from chat.prompting import Counter, FittedPrompt, PromptInputs, fit_messages
from chat.services.messages import StoredQuestion
from chat.services.turn.decide import Decision, Intent
from chat.services.turn.history import TurnContext
from chat.services.turn.request import TurnRequest
from chat.services.turn.retrieve import Retrieval
from chat.wording import workspace_language
from languages import Language
from retrieval.filters import OPEN, Access
from retrieval.search import ScoredPassage


@dataclass(frozen=True)
class TurnPlan:
    """What the server decided for a turn before storing anything."""

    model_id: str
    backend: Backend
    grounding: Grounding
    # The workspace's output guard (rules, safe reply, claims checks).
    guard: Policy
    # Tokens the prompt may take (None: no window known).
    budget: int | None
    count: Counter

    @property
    def grounded(self) -> bool:
        return self.grounding == Grounding.DOCUMENTS

    @property
    def generative(self) -> bool:
        """False for the extractive engine: no window, no history, no claims."""
        return self.backend.generative

    @property
    def claims(self) -> tuple[str, ...]:
        """The guard's claims checks the model answers (a generative one only)."""
        return self.guard.claims if self.generative else ()


@dataclass(frozen=True)
class PreparedTurn:
    """A turn ready for generation: what each phase before it returned, as
    it returned it, and the prompt fitted from them (:func:`turn_compose`)."""

    # What was asked (with an end-user token's resources, ``turn_prepare``).
    request: TurnRequest
    plan: TurnPlan
    # The stored question and its session.
    question: StoredQuestion
    context: TurnContext
    # What retrieval returned, best first, and the queries searched.
    retrieval: Retrieval
    # What kind of reply the turn gets (answer, no answer, a form, small
    # talk) and how well the passages answer (decide.py).
    decision: Decision
    # The prompt: what a generative backend is sent; for the extractive
    # engine, the question and passages it answers from, in the same form.
    prompt: FittedPrompt

    @property
    def grounding(self) -> Grounding:
        """The reply's grounding: "none" for a reply that says the documents
        don't answer, or that answers small talk."""
        return Grounding.NONE if self.decision.intent in _UNGROUNDED else self.plan.grounding

    @property
    def grounded(self) -> bool:
        return self.grounding == Grounding.DOCUMENTS

    @property
    def language(self) -> Language:
        """The turn's language with the workspace's own texts (chat/wording.py):
        what every reply the service writes itself is worded in."""
        return workspace_language(self.request.workspace, self.context.language)

    @property
    def access(self) -> Access:
        """Who may read what in this turn (set by turn_prepare; open when not)."""
        return self.request.access or OPEN

    @property
    def passages(self) -> list[ScoredPassage]:
        """The passages the model sees, numbered 1..n: citations index into these."""
        return self.prompt.passages

    @property
    def messages(self) -> list[ChatMessage]:
        return self.prompt.messages

    @property
    def schema(self) -> JsonSchema:
        """The reply's JSON schema (with one boolean per claims check)."""
        return output_schema(claims=len(self.plan.claims))

    @property
    def max_tokens(self) -> int | None:
        """The request's ``max_tokens`` within the backend's (None: the backend's)."""
        asked = self.request.max_tokens
        return min(asked, self.plan.backend.max_tokens) if asked else None

    @property
    def resumed(self) -> bool:
        """An Idempotency-Key retry answering a question stored by a failed attempt."""
        return self.request.resume is not None

    @property
    def user_texts(self) -> tuple[str, ...]:
        """The user's own words in this turn (question, history, the
        integrator's note): a cited part made of them loses its citation."""
        return (
            self.request.question,
            self.question.session.system_note,
            *(text for turn in self.context.turns for text in (turn.question, turn.answer)),
            *(text for pair in self.request.conversation.history for text in pair),
        )

    def provenance(self) -> dict[str, str]:
        """``provenance`` of the reply: the hash of the exact messages it came from."""
        return {"messages_hash": messages_hash(self.messages)}

    def reason(self, grounding: str | None = None) -> tuple[DecisionReason | None, dict[str, Any]]:
        """Why the turn's reply is no answer or a form, and the figures that
        decided it: the decision's; for a turn the decision let answer whose
        reply's ``grounding`` is none (the extractive engine found no
        sentence: it says the documents don't), ``no_sentence``."""
        decision = self.decision
        if decision.intent == Intent.ANSWER and self.grounded and grounding == Grounding.NONE:
            figures = {
                "answerability": decision.answerability,
                "threshold": self.request.workspace.answerability_threshold,
            }
            return DecisionReason.NO_SENTENCE, figures
        return decision.reason, dict(decision.figures)

    def trace(self, reply: Message | None = None) -> PromptTrace:
        """The prompt trace; with the stored ``reply``, its reason is the
        reply's (:meth:`reason`), else the decision's."""
        reason, figures = self.reason(reply.grounding if reply is not None else None)
        trace: PromptTrace = {
            "passages": [_trace_passage(p) for p in self.passages],
            "messages": [{"role": m["role"], "content": m["content"]} for m in self.messages],
            "answerability": self.decision.answerability,
            "decision": self.decision.intent.value,
            "reason": reason.value if reason is not None else None,
            "figures": figures,
        }
        if self.retrieval.queries:
            trace["retrieval_queries"] = [query.text for query in self.retrieval.queries]
        trace["access"] = self.access.as_json()
        if self.retrieval.subject is not None:
            subject = str(self.retrieval.subject)
            trace["subject"] = {"resource_id": subject, "from": self.retrieval.subject_from or ""}
        prompt = self.prompt
        max_tokens = self.plan.backend.max_tokens
        if prompt.budget is not None:
            trace["budget"] = {
                "context_length": prompt.budget + max_tokens + settings.PROMPT_TOKEN_MARGIN,
                "max_tokens": max_tokens,
                "prompt_budget": prompt.budget,
                "prompt_tokens": prompt.prompt_tokens,
            }
            trace["dropped"] = {
                "passages": [_trace_passage(p) for p in prompt.dropped_passages],
                "history": [
                    {"user_message_id": str(t.question_id), "assistant_message_id": str(t.answer_id)}
                    for t in prompt.dropped_turns
                ],
                "truncated_passage_id": (
                    str(prompt.truncated_passage_id) if prompt.truncated_passage_id is not None else None
                ),
            }
        return trace


def _trace_passage(passage: ScoredPassage) -> TracePassage:
    return {
        "passage_id": str(passage.passage_id),
        "resource_id": str(passage.resource_id),
        "score": passage.score,
        "language": passage.language,
    }


def turn_compose(
    request: TurnRequest,
    *,
    plan: TurnPlan,
    stored: StoredQuestion,
    context: TurnContext,
    retrieval: Retrieval,
    decision: Decision,
) -> PreparedTurn:
    """The prepared turn: the prompt (the session's recent history, the
    passages, the question) fitted into the model's window."""
    workspace = request.workspace
    window = workspace.history_turns
    # The extractive engine reads no prompt: its conversation is in the
    # retrieval queries. Without documents there are none, so its prompt
    # (the trace) carries the history window as a generative model's does.
    with_history = plan.generative or not plan.grounded
    turns = context.turns[-window:] if with_history and window else []
    inputs = PromptInputs(
        workspace_prompt=workspace.system_prompt,
        history=turns,
        question=request.question,
        passages=retrieval.passages,
        grounded=plan.grounded,
        system_note=stored.session.system_note,
        claims=plan.claims,
        language=context.language,
    )
    return PreparedTurn(
        request=request,
        plan=plan,
        question=stored,
        context=context,
        retrieval=retrieval,
        decision=decision,
        prompt=fit_messages(inputs, count=plan.count, budget=plan.budget),
    )


# Replies that say the documents don't answer, or that answer small talk.
_UNGROUNDED = frozenset({Intent.NO_ANSWER, Intent.SMALL_TALK})
