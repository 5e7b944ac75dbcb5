"""Everything before generation: check the request, plan the turn, store the
question, retrieve, compose the prompt."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from django.conf import settings

from chat.backends import BaseBackend, ChatMessage, get_backend, resolve_model
from chat.models import Grounding
from chat.prompting import Counter, QuestionTooLong, question_fits, system_message
from chat.services.guard_policies import guard_policy_load
from chat.services.messages import StoredQuestion
from chat.services.questions import question_save
from chat.services.turn.compose import PreparedTurn, TurnPlan, turn_compose
from chat.services.turn.decide import Decision, Intent, turn_decide
from chat.services.turn.followup_search import retrieval_ahead
from chat.services.turn.history import TurnContext, turn_context
from chat.services.turn.request import TurnRequest
from chat.services.turn.retrieve import Retrieval, candidate_passages, turn_retrieve
from chat.services.turn.scope import turn_access
from chat.services.turn.smalltalk import is_small_talk, small_talk
from daneshyar import timing
from daneshyar.exceptions import ApplicationError, Forbidden, ValidationFailed
from languages import LANGUAGES, Language
from resources.selectors import ready_resources_exist
from retrieval.filters import OPEN
from retrieval.search import named_resources_validate


def turn_prepare(request: TurnRequest) -> PreparedTurn:
    """Everything before generation. Raises 403/400/404 before storing anything.

    The conversation's history and system note (a ``messages`` list) are
    stored with a new session, checked against an existing one. The turn's
    language is decided with the conversation (``turn_context``), once.
    """
    request, plan = _checked(request)
    # A generative model greets back itself; the extractive engine has no words of its own.
    small = not plan.generative and is_small_talk(request.question)
    if plan.grounded and not small:
        # The question is embedded while it is stored. A wrong session's 404
        # then costs that embedding too, on a turn the rate limits counted.
        retrieval_ahead(request.question, model=request.workspace.embedding_model)
    # Stored before retrieval: a wrong session is a 404 before the search
    # runs, and nothing below can fail with a 4xx any more.
    with timing.phase("store"):
        stored = _question_save(request)
        context = turn_context(
            workspace=request.workspace,
            stored=stored,
            question=request.question,
            access=request.access or OPEN,
        )
    if small:
        retrieval = Retrieval(passages=[], queries=[])
        decision = small_talk(request.workspace, request.question, context.language)
    elif plan.grounded:
        retrieval, decision = _retrieve_and_decide(request, plan, context)
    else:
        retrieval, decision = Retrieval(passages=[], queries=[]), Decision(Intent.ANSWER)
    with timing.phase("compose"):
        return turn_compose(
            request, plan=plan, stored=stored, context=context, retrieval=retrieval, decision=decision
        )


def _checked(request: TurnRequest) -> tuple[TurnRequest, TurnPlan]:
    """The request with who may read what in the turn (403/400, scope.py),
    and the turn's plan (400 for an unknown model or resource, or a question
    that does not fit the model's window)."""
    _trace_check(request)
    access = turn_access(
        principal=request.principal,
        workspace=request.workspace,
        requested=request.resource_ids,
        filters=request.filters,
        groups=request.groups,
    )
    request = replace(request, allowed_resource_ids=access.resource_ids, access=access)
    with timing.phase("plan"):
        plan = _plan(request)
        if plan.generative:
            _question_check(request, plan)
    return request, plan


def _question_save(request: TurnRequest) -> StoredQuestion:
    """The stored question: a new one, or the one a failed attempt stored
    (an Idempotency-Key retry)."""
    resume = request.resume
    return question_save(
        workspace=request.workspace,
        external_user_id=request.external_user_id,
        session_id=request.session_id,
        conversation=request.conversation,
        resumed=resume.question_id if resume is not None else None,
        session_created=resume is not None and resume.session_created,
    )


def _retrieve_and_decide(
    request: TurnRequest, plan: TurnPlan, context: TurnContext
) -> tuple[Retrieval, Decision]:
    """A grounded turn's passages, and what to do with them."""
    access = request.access or OPEN
    retrieval = turn_retrieve(
        workspace=request.workspace,
        context=context,
        resource_ids=request.resource_ids,
        allowed=request.allowed_resource_ids,
        access=access,
        rewriter=plan.backend if plan.backend.generative else None,
    )
    with timing.phase("decide"):
        decision = turn_decide(
            workspace=request.workspace,
            context=context,
            passages=retrieval.passages,
            scoring_context=retrieval.scoring_context,
            may_clarify=not plan.generative,
            in_focus=retrieval.subject is not None,
            deeper=partial(candidate_passages, request.workspace, context, access),
        )
    if decision.subject is not None:
        own = [p for p in retrieval.passages if p.resource_id == decision.subject]
        retrieval = replace(retrieval, passages=own, subject=decision.subject, subject_from="named")
    return retrieval, decision


def _trace_check(request: TurnRequest) -> None:
    if request.include_prompt_trace and not settings.PROMPT_TRACE_ENABLED:
        raise Forbidden("Prompt traces are not enabled on this deployment (PROMPT_TRACE_ENABLED).")
    if request.include_prompt_trace and not request.principal.is_admin:
        raise Forbidden("include_prompt_trace needs an API key with the admin scope.")


def _plan(request: TurnRequest) -> TurnPlan:
    """The model, grounding and guard of the turn (400 for an unknown model or resource)."""
    workspace = request.workspace
    model_id = str(resolve_model(request.model)["id"])
    backend = get_backend(model_id)
    # Unknown ids are a 400 even when the workspace has nothing ready yet.
    named_resources_validate(workspace=workspace, resource_ids=request.resource_ids)
    # A turn that filters the documents is about them: with none matching
    # (or none at all) it says the documents don't answer, never answers
    # from general knowledge.
    grounding = (
        Grounding.DOCUMENTS
        if request.filters is not None or ready_resources_exist(workspace=workspace)
        else Grounding.GENERAL_KNOWLEDGE
    )
    return TurnPlan(
        model_id=model_id,
        backend=backend,
        grounding=grounding,
        guard=guard_policy_load(workspace=workspace),
        budget=prompt_budget(backend) if backend.generative else None,
        count=token_counter(backend),
    )


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


def _question_check(request: TurnRequest, plan: TurnPlan) -> None:
    """400 when the instructions and the question alone do not fit the model's
    window, whatever language the turn is then held in: it is decided with
    the conversation, after the question is stored, so the instructions are
    counted with the longest language line a turn can carry."""
    try:
        question_fits(
            count=plan.count,
            budget=plan.budget,
            workspace_prompt=request.workspace.system_prompt,
            question=request.question,
            grounded=plan.grounded,
            system_note=request.conversation.system or "",
            language=max(LANGUAGES.values(), key=_instructions_length),
        )
    except QuestionTooLong as exc:
        raise ValidationFailed(
            "The message is too long for this model.",
            fields={
                "message": [
                    f"The message is too long for model {plan.model_id!r}: with the instructions it takes "
                    f"{exc.tokens} tokens, and at most {exc.budget} fit beside the reply. Shorten it."
                ]
            },
        ) from None


def _instructions_length(language: Language) -> int:
    return len(system_message("", language=language)["content"])
