"""A turn's prompt: the messages that fit the model's window, and the
prepared turn that carries them to generation (with its prompt trace)."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings

from chat.backends import BaseBackend, ChatMessage
from chat.backends.base import JsonSchema
from chat.contract import PromptTrace
from chat.conversation import messages_hash
from chat.guard import Policy
from chat.models import Grounding
from chat.output import output_schema
from chat.prompting import Counter, FittedPrompt, PromptInputs, fit_messages
from chat.services.questions import StoredQuestion
from chat.services.turn.context import TurnContext
from chat.services.turn.decide import Decision, Intent
from chat.services.turn.request import TurnRequest
from chat.services.turn.retrieve import Retrieval
from daneshyar.exceptions import ApplicationError
from retrieval.search import ScoredPassage


@dataclass(frozen=True)
class TurnPlan:
    """What the server decided for a turn before storing anything."""

    model_id: str
    backend: BaseBackend
    grounding: Grounding
    # The workspace's output guard (rules, safe reply, claims checks).
    guard: Policy
    # False for the extractive engine: no window, no history, no claims.
    generative: bool
    # Tokens the prompt may take (None: no window known).
    budget: int | None
    count: Counter

    @property
    def grounded(self) -> bool:
        return self.grounding == Grounding.DOCUMENTS


@dataclass
class PreparedTurn:
    question: StoredQuestion
    question_text: str
    model_id: str
    backend: BaseBackend
    grounding: Grounding
    # What retrieval returned, best first.
    retrieved: list[ScoredPassage]
    # The prompt: what a generative backend is sent; for the extractive
    # engine, the question and passages it answers from, in the same form.
    prompt: FittedPrompt
    schema: JsonSchema
    include_trace: bool
    on_generation_unavailable: str
    # Per-request generation options (the OpenAI-compatible endpoint's
    # max_tokens and temperature); None: the backend's defaults.
    max_tokens: int | None = None
    temperature: float | None = None
    # The workspace's output guard (rules, safe reply, claims checks).
    guard: Policy = field(default_factory=Policy)
    # The user's own words in this turn (question, history, the integrator's
    # note): a cited part made of them loses its citation.
    user_texts: list[str] = field(default_factory=list)
    # Sign the reply (certificate: true on the request).
    certificate: bool = False
    # An Idempotency-Key retry answering a question stored by a failed attempt.
    resumed: bool = False
    # What kind of reply the turn gets (answer, no answer, a form, small
    # talk) and how well the passages answer (decide.py).
    decision: Decision = field(default_factory=lambda: Decision(Intent.ANSWER))
    # What was searched (the question, and the conversation for a follow-up).
    retrieval_queries: list[str] = field(default_factory=list)
    # The question the turn answers (after a "which one?" form: the one asked
    # before it) and, for a follow-up, that question with the conversation.
    focus: str = ""
    scoring_context: str | None = None
    # The workspace's reply when the documents don't say.
    no_answer_text: str = ""

    @property
    def grounded(self) -> bool:
        return self.grounding == Grounding.DOCUMENTS

    @property
    def passages(self) -> list[ScoredPassage]:
        """The passages the model sees, numbered 1..n: citations index into these."""
        return self.prompt.passages

    @property
    def messages(self) -> list[ChatMessage]:
        return self.prompt.messages

    def provenance(self) -> dict[str, str]:
        """``provenance`` of the reply: the hash of the exact messages it came from."""
        return {"messages_hash": messages_hash(self.messages)}

    def trace(self) -> PromptTrace:
        trace: PromptTrace = {
            "passages": [
                {"passage_id": str(p.passage_id), "resource_id": str(p.resource_id), "score": p.score}
                for p in self.passages
            ],
            "messages": [{"role": m["role"], "content": m["content"]} for m in self.messages],
            "answerability": self.decision.answerability,
            "decision": self.decision.intent.value,
        }
        if self.retrieval_queries:
            trace["retrieval_queries"] = list(self.retrieval_queries)
        prompt = self.prompt
        if prompt.budget is not None:
            trace["budget"] = {
                "context_length": prompt.budget + self.backend.max_tokens + settings.PROMPT_TOKEN_MARGIN,
                "max_tokens": self.backend.max_tokens,
                "prompt_budget": prompt.budget,
                "prompt_tokens": prompt.prompt_tokens,
            }
            trace["dropped"] = {
                "passages": [
                    {"passage_id": str(p.passage_id), "resource_id": str(p.resource_id), "score": p.score}
                    for p in prompt.dropped_passages
                ],
                "history": [
                    {"user_message_id": str(t.question_id), "assistant_message_id": str(t.answer_id)}
                    for t in prompt.dropped_turns
                ],
                "truncated_passage_id": (
                    str(prompt.truncated_passage_id) if prompt.truncated_passage_id is not None else None
                ),
            }
        return trace


def prompt_budget(backend: BaseBackend) -> int | None:
    """Tokens a prompt may take: ``context_length - max_tokens - margin``
    (None when the backend has no window or does not report one)."""
    try:
        length = backend.context_length()
    except ApplicationError:
        length = None  # the server is down: the generation will say so
    if length is None:
        return None
    return max(0, length - backend.max_tokens - settings.PROMPT_TOKEN_MARGIN)


def token_counter(backend: BaseBackend) -> Counter:
    def count(messages: list[ChatMessage]) -> int:
        try:
            return backend.count_tokens(messages)
        except ApplicationError:
            # The server cannot count now: estimate (on the long side).
            return BaseBackend.count_tokens(backend, messages)

    return count


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
    claims = plan.guard.claims if plan.generative else ()
    passages = retrieval.passages
    inputs = PromptInputs(
        workspace_prompt=workspace.system_prompt,
        history=turns,
        question=request.question,
        passages=passages,
        grounded=plan.grounded,
        system_note=stored.session.system_note,
        claims=claims,
    )
    max_tokens = request.max_tokens
    return PreparedTurn(
        question=stored,
        question_text=request.question,
        model_id=plan.model_id,
        backend=plan.backend,
        grounding=Grounding.NONE if decision.intent in _UNGROUNDED else plan.grounding,
        retrieved=passages,
        prompt=fit_messages(inputs, count=plan.count, budget=plan.budget),
        schema=output_schema(claims=len(claims)),
        include_trace=request.include_prompt_trace,
        on_generation_unavailable=workspace.on_generation_unavailable,
        max_tokens=min(max_tokens, plan.backend.max_tokens) if max_tokens else None,
        temperature=request.temperature,
        guard=plan.guard,
        certificate=request.certificate,
        resumed=request.resume is not None,
        user_texts=[
            request.question,
            stored.session.system_note,
            *(text for turn in context.turns for text in (turn.question, turn.answer)),
            *(text for pair in request.conversation.history for text in pair),
        ],
        decision=decision,
        retrieval_queries=[q.text for q in retrieval.queries],
        focus=context.focus,
        scoring_context=retrieval.scoring_context,
        no_answer_text=workspace.no_answer_text,
    )


# Replies that say the documents don't answer, or that answer small talk.
_UNGROUNDED = frozenset({Intent.NO_ANSWER, Intent.SMALL_TALK})
