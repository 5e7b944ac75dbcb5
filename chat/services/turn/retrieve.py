"""A turn's retrieval: the passages its prompt may cite, found with the
conversation (``followup_search.py``).

**The subject in focus.** After the user chose a document in a "which one
do you mean?" form, the turn answers from that document only. A follow-up
("And for patients over 70?", "How do I clean it?": it refers back or goes
on, followup_search.py) of a reply that answered from one document reads
none of the documents parallel to that one (the same kind of document
about another subject, subjects.py: the other drugs' leaflets, not a
leaflet of advice for older patients; and those a form offered beside it)
— unless it asks to compare (the language's ``comparisons``: "compare",
"both", "the others"), names a
subject no retrieved document has (naming.py) or by a word of another
document's names ("And for paracetamol?"), or points at one the
conversation never named (clarify.py). Parallel is read with the
documents' numbers aside, as a form reads it (two data sheets that word a
weight differently); a word only other documents' text has is a thing of
the subject worded otherwise ("the battery"), not another subject. The prompt trace names the subject
and why (``subject``)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace

from chat.backends import BaseGenerativeBackend
from chat.services.turn.choice import option_id
from chat.services.turn.followup_search import RetrievalQuery, leans_on_conversation, turn_search
from chat.services.turn.history import TurnContext
from chat.services.turn.naming import question_names, uncovered
from chat.services.turn.references import unresolved_reference
from chat.services.turn.subjects import document_words, parallel_documents
from chat.text import WORD, content_words
from languages import normalize
from retrieval.filters import OPEN, Access
from retrieval.search import ScoredPassage, search
from workspaces.models import Workspace


@dataclass(frozen=True)
class Retrieval:
    passages: list[ScoredPassage]
    queries: list[RetrievalQuery]
    # The document the turn was kept to, and why: "choice" (the form's) or
    # "previous_answer" (a follow-up of a reply from it); None: none.
    subject: uuid.UUID | None = None
    subject_from: str | None = None

    @property
    def scoring_context(self) -> str | None:
        """The question with the conversation, when the turn is a follow-up."""
        return self.queries[1].text if len(self.queries) > 1 else None


def turn_retrieve(
    *,
    workspace: Workspace,
    context: TurnContext,
    resource_ids: Sequence[uuid.UUID],
    rewriter: BaseGenerativeBackend | None = None,
    allowed: Sequence[uuid.UUID] | None = None,
    access: Access = OPEN,
) -> Retrieval:
    """The workspace's passages for the turn's question, best first (widened
    towards ``resource_ids`` when given; only from the chosen document after a
    "which one do you mean?" form; each allowed resource named when
    ``allowed``, an end-user token's resources, is given). Every search is
    confined to what ``access`` may read (the filters, the groups and the
    token's resources, retrieval/filters.py) inside its SQL. ``rewriter``: a
    generative backend that may make a follow-up standalone first
    (followup_search.py)."""
    named = list(resource_ids)
    chosen, why = subject_in_focus(context)
    if allowed is not None and access.resource_ids is None:
        access = replace(access, resource_ids=tuple(allowed))
    if allowed is not None:
        # A choice outside an end-user token's resources is ignored; without
        # a request-level choice each allowed resource is named, so each is
        # represented (the search reads no other: ``access``).
        chosen = chosen if chosen in allowed else None
        why = why if chosen is not None else None
        named = named or list(allowed)
    if chosen is not None:
        named = [chosen]
    result = turn_search(
        workspace=workspace, context=context, resource_ids=named, access=access, rewriter=rewriter
    )
    passages = result.passages
    if why == "choice":
        passages = [p for p in passages if p.resource_id == chosen]
    elif chosen is not None:
        kept = _kept_to(chosen, passages, context)
        chosen, why = (chosen, why) if kept is not None else (None, None)
        passages = kept if kept is not None else passages
    return Retrieval(passages=passages, queries=result.queries, subject=chosen, subject_from=why)


def subject_in_focus(context: TurnContext) -> tuple[uuid.UUID | None, str | None]:
    """The document the turn is kept to, and why (rules above), before
    its passages are read."""
    if context.chosen is not None:
        return context.chosen, "choice"
    last = context.turns[-1] if context.turns else None
    if last is None or last.form_fields or len(set(context.cited)) != 1:
        return None, None
    language = context.language
    words = WORD.findall(normalize(context.question, language.code).lower())
    if not leans_on_conversation(context.question, language) or any(
        word in language.conversation.comparisons for word in words
    ):
        return None, None
    if unresolved_reference(context.question, context.earlier_questions, language):
        return None, None  # "this animal": which one is asked back (clarify.py)
    return context.cited[0], "previous_answer"


def _kept_to(
    subject: uuid.UUID, passages: Sequence[ScoredPassage], context: TurnContext
) -> list[ScoredPassage] | None:
    """``passages`` without those of documents parallel to ``subject``'s
    (the same kind of document about another subject: subjects.py); None
    when the follow-up names another subject (rules above): a word of
    another document's names that ``subject``'s lacks, or a name no
    retrieved passage has. A name only other documents' text has, not their
    names, is a thing of the subject that its passages word otherwise ("the
    battery" of a laptop whose sheet says "on a full charge"): kept to it."""
    own = [p for p in passages if p.resource_id == subject]
    missing = uncovered(question_names(context.question, context.language), own)
    if missing and uncovered(missing, passages):
        return None
    words = document_words([subject, *(p.resource_id for p in passages)])
    if subject not in words:
        return list(passages)
    asked = content_words(context.question)
    mine = words[subject]
    if any(asked & (other.names - mine.names) for r, other in words.items() if r != subject):
        return None
    counterparts = {
        r for r, other in words.items() if r != subject and parallel_documents(mine, other, numbers=False)
    }
    counterparts |= offered_beside(subject, context)
    return [p for p in passages if p.resource_id not in counterparts]


def offered_beside(subject: uuid.UUID, context: TurnContext) -> set[uuid.UUID]:
    """The documents the conversation's last "which one do you mean?" form
    offered beside ``subject``: answering alike for their own subjects
    (clarify.py), they are its counterparts however differently written."""
    form = next((turn.form_options for turn in reversed(context.turns) if turn.form_options), ())
    offered = {option_id(value) for value, _ in form}
    return {r for r in offered if r is not None and r != subject} if subject in offered else set()


# How deep the question is searched for the documents a "which one do you
# mean?" form offers: a turn retrieves the workspace's top_k passages (5 by
# default), so seven manuals that answer alike would otherwise offer five.
CANDIDATE_PASSAGES = 60


def candidate_passages(
    workspace: Workspace, context: TurnContext, access: Access = OPEN
) -> list[ScoredPassage]:
    """The question's ``CANDIDATE_PASSAGES`` best passages that ``access``
    may read: where a form finds every document it could offer (decide.py)."""
    return search(workspace=workspace, query=context.focus, top_k=CANDIDATE_PASSAGES, access=access)
