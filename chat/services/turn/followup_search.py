"""The conversation decides what is retrieved.

A standalone question is searched as it is. A follow-up ("And for patients
over 75?", "Is there a fee for that?") leans on the earlier turns, so it is
searched twice and the two result lists are fused:

* the question alone (weight 1), which keeps what the follow-up itself asks
  about ("over 75", "fee");
* the question followed by the earlier user turns, newest first, cut to
  ``CONTEXT_MAX_CHARS`` (weight ``CONTEXT_WEIGHT``), which carries the
  subject of the conversation ("statin", "return a kettle"). Newest first:
  the embedding model reads only the start of a long text, and recent turns
  matter most. 600 characters, not more: embedding it then takes about as
  long as searching the question (11.6 against 21.4 ms at 1,000 on a
  2-core CPU), so it is ready when needed; on MTRAG-UN dev (2 of 193
  follow-ups longer than 600, 23 longer than 400) caps of 400, 600 and
  1,000 give the same figures.

A passage's fused score is the weighted sum of its scores in each list,
plus ``CITED_PRIOR`` when the conversation's previous reply cited its
document. A list holds its query's ``CANDIDATES_PER_QUERY`` best; a passage
below that cut is given the list's lowest score (it scored at most that),
not 0: with 0, a passage the conversation finds first but the question
alone ranks 21st lost to one the question alone ranks 20th however little
it has to do with the conversation, and a model whose cosines sit in a
narrow band (multilingual-e5-small) lost most. Measured on the MTRAG-UN
development split, each collection apart (conversation recall@5, clapnq /
fiqa; ``bench/conversation_quality.py --settings``), 0 and 20 deep against
the lowest score and 50 deep: e5 0.954 / 0.868 against 0.967 / 0.891,
all-MiniLM-L6-v2 0.961 / 0.906 against 0.965 / 0.897.

Measured on the MTRAG-UN development split
(``bench/conversation_quality.py``): joining all turns into one query loses to
the last turn alone, while this fusion beats both; the weights were chosen
there (0.5 to 1.5 for the conversation query all did better than the last
turn alone).

A generative backend may also rewrite the follow-up into a standalone
question (one short, budgeted call: ``chat.services.turn.rewrite``); the
rewrite is searched as a third query, at weight 1. The call runs while the
other two queries are embedded and searched, and the second query is
embedded while the first is searched: a follow-up waits for the longest of
these, not for their sum.

Whether a question leans on the conversation is decided cheaply, from its
words in the turn's language (languages/<code>/conversation.py:
``anaphora``, ``continuations``, ``continuation_phrases``): a pronoun or
demonstrative ("it", "that", "those"), an opening "and" or "what about" (in
Persian "و", and), or fewer than ``STANDALONE_MIN_WORDS`` content words.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace

from django.conf import settings

from chat.backends import BaseGenerativeBackend
from chat.services.turn.history import TurnContext
from chat.services.turn.rewrite import query_rewrite
from chat.text import WORD, content_words
from daneshyar import background, timing
from languages import Language, normalize
from retrieval.embeddings import embed_ahead
from retrieval.filters import OPEN, Access
from retrieval.search import Legs, ScoredPassage, search
from workspaces.models import Workspace

CONTEXT_WEIGHT = 0.7
CONTEXT_MAX_CHARS = 600
# Each query's list is searched this deep before fusion (module doc).
CANDIDATES_PER_QUERY = 50
# Added to the fused score of passages of a document the previous reply cited.
CITED_PRIOR = 0.05
STANDALONE_MIN_WORDS = 5


@dataclass(frozen=True)
class RetrievalQuery:
    text: str
    weight: float


def needs_context(question: str, earlier_questions: Sequence[str], language: Language) -> bool:
    """Whether ``question`` leans on the earlier user turns (cheap: its words
    only, those of ``language``, the turn's)."""
    if not earlier_questions:
        return False
    return leans_on_conversation(question, language) or len(content_words(question)) < STANDALONE_MIN_WORDS


def leans_on_conversation(question: str, language: Language) -> bool:
    """Whether ``question`` refers back or goes on (a pronoun or
    demonstrative, an opening "and", "what about"): what makes a follow-up
    of it apart from its length."""
    rules = language.conversation
    words = WORD.findall(normalize(question, language.code).lower())
    if any(word in rules.anaphora for word in words):
        return True
    if words and words[0] in rules.continuations:
        return True
    return " ".join(words[:2]) in rules.continuation_phrases


def question_query(question: str) -> RetrievalQuery:
    """Every turn's first query: the question, as long as a query may be."""
    return RetrievalQuery(question[: settings.MAX_QUERY_CHARS], 1.0)


def retrieval_ahead(question: str, *, model: str) -> None:
    """Start embedding the turn's first query (the question) on a background
    thread, so that the model (the workspace's, ``model``) runs while the
    question is stored."""
    if Legs.configured().dense:
        embed_ahead([question_query(question).text], side="query", model=model)


def retrieval_queries(
    question: str,
    earlier_questions: Sequence[str],
    *,
    language: Language,
    rewrite: str | None = None,
) -> list[RetrievalQuery]:
    """What to search for this turn: the question, and for a follow-up the
    question with the conversation (and the model's rewrite, when there is one).

    ``earlier_questions``: the earlier user turns, oldest first; ``language``:
    the turn's.
    """
    queries = [question_query(question)]
    if not needs_context(question, earlier_questions, language):
        return queries
    joined = " ".join([question, *reversed(earlier_questions)])[:CONTEXT_MAX_CHARS]
    queries.append(RetrievalQuery(joined, CONTEXT_WEIGHT))
    if rewrite and rewrite.strip() and rewrite.strip() != question.strip():
        queries.append(RetrievalQuery(rewrite.strip()[: settings.MAX_QUERY_CHARS], 1.0))
    return queries


@dataclass(frozen=True)
class FollowupSearchResult:
    passages: list[ScoredPassage]
    # Every query searched, ``later`` ones included.
    queries: list[RetrievalQuery]


def turn_search(
    *,
    workspace: Workspace,
    context: TurnContext,
    resource_ids: Sequence[uuid.UUID],
    access: Access,
    rewriter: BaseGenerativeBackend | None,
) -> FollowupSearchResult:
    """A turn's question searched with its conversation (rules above): its
    queries, and for a follow-up the rewrite by ``rewriter`` (a generative
    backend), whose call runs while the other queries are searched."""
    question = context.focus
    language = context.language
    queries = retrieval_queries(question, context.earlier_questions, language=language)
    pending: Future[str | None] | None = None
    if rewriter is not None and needs_context(question, context.earlier_questions, language):
        # The model's call runs while the other queries are searched.
        pending = background.submit(
            query_rewrite, rewriter, question=question, turns=context.turns, language=language
        )

    def rewritten() -> list[RetrievalQuery]:
        if pending is None:
            return []
        with timing.phase("rewrite"):
            rewrite = pending.result()
        later = retrieval_queries(question, context.earlier_questions, rewrite=rewrite, language=language)
        return later[len(queries) :]

    return followup_search(
        workspace=workspace,
        queries=queries,
        resource_ids=resource_ids,
        cited_resource_ids=context.cited,
        later=rewritten if pending is not None else None,
        access=access,
    )


def followup_search(
    *,
    workspace: Workspace,
    queries: Sequence[RetrievalQuery],
    resource_ids: Sequence[uuid.UUID] = (),
    cited_resource_ids: Sequence[uuid.UUID] = (),
    later: Callable[[], Sequence[RetrievalQuery]] | None = None,
    access: Access = OPEN,
) -> FollowupSearchResult:
    """The workspace's passages for these queries, best first (rules above).

    One query is an ordinary search. With more, each list is searched
    ``CANDIDATES_PER_QUERY`` deep and fused; the result keeps the workspace's
    ``top_k`` (with ``resource_ids``: ``widened_top_k``, plus the best
    ``per_resource_k`` of each named resource, as one search does).

    ``later``: called once the given queries are searched, for queries that
    were not known before (the model's rewrite, which runs meanwhile). While
    one query is searched the next one is embedded (``embed_ahead``): the
    model and PostgreSQL work at the same time. Every search reads only what
    ``access`` may (retrieval/filters.py).
    """
    named = list(resource_ids)
    if len(queries) == 1 and not cited_resource_ids and later is None:
        found_one = search(
            workspace=workspace, query=queries[0].text, resource_ids=named or None, access=access
        )
        return FollowupSearchResult(found_one, list(queries))
    depth = max(workspace.widened_top_k if named else workspace.top_k, CANDIDATES_PER_QUERY)
    dense_leg = Legs.configured().dense
    lists = _searched(
        queries, workspace=workspace, named=named, depth=depth, access=access, dense_leg=dense_leg
    )
    if later is not None:
        lists += _searched(
            later(), workspace=workspace, named=named, depth=depth, access=access, dense_leg=dense_leg
        )
    return FollowupSearchResult(
        _ranked(lists, cited_resource_ids, workspace=workspace, named=named),
        [query for query, _ in lists],
    )


def _searched(
    batch: Sequence[RetrievalQuery],
    *,
    workspace: Workspace,
    named: list[uuid.UUID],
    depth: int,
    access: Access,
    dense_leg: bool,
) -> list[tuple[RetrievalQuery, list[ScoredPassage]]]:
    """Each query's list, ``depth`` deep; with a dense leg, the next query is
    embedded while one is searched."""
    lists = []
    for i, query in enumerate(batch):
        if i + 1 < len(batch) and dense_leg:
            embed_ahead([batch[i + 1].text], side="query", model=workspace.embedding_model)
        hits = search(
            workspace=workspace, query=query.text, resource_ids=named or None, top_k=depth, access=access
        )
        lists.append((query, hits))
    return lists


def _ranked(
    lists: Sequence[tuple[RetrievalQuery, list[ScoredPassage]]],
    cited_resource_ids: Sequence[uuid.UUID],
    *,
    workspace: Workspace,
    named: list[uuid.UUID],
) -> list[ScoredPassage]:
    """The passages kept from the fused lists, best first, each with its
    fused score (``CITED_PRIOR`` added for a cited document's) and rank."""
    found, fused = _fused(lists)
    cited = set(cited_resource_ids)
    total = sum(query.weight for query, _ in lists)
    scores = {
        pid: (score + (CITED_PRIOR if found[pid].resource_id in cited else 0.0)) / total
        for pid, score in fused.items()
    }
    ordered = sorted(scores, key=lambda pid: (-scores[pid], str(pid)))
    chosen = _kept(ordered, found, workspace=workspace, named=named)
    return [replace(found[pid], score=scores[pid], rank=rank) for rank, pid in enumerate(chosen, start=1)]


def _fused(
    lists: Sequence[tuple[RetrievalQuery, list[ScoredPassage]]],
) -> tuple[dict[uuid.UUID, ScoredPassage], dict[uuid.UUID, float]]:
    """Every passage the lists found, and its weighted sum of scores over
    all the lists: below a list's cut, that list's lowest score (module doc)."""
    found: dict[uuid.UUID, ScoredPassage] = {}
    for _, passages in lists:
        for passage in passages:
            found.setdefault(passage.passage_id, passage)
    fused = dict.fromkeys(found, 0.0)
    for query, passages in lists:
        # A passage below this list's cut scored at most its lowest score.
        floor = min((passage.score for passage in passages), default=0.0)
        scores = {passage.passage_id: passage.score for passage in passages}
        for pid in fused:
            fused[pid] += query.weight * scores.get(pid, floor)
    return found, fused


def _kept(
    ordered: list[uuid.UUID],
    found: dict[uuid.UUID, ScoredPassage],
    *,
    workspace: Workspace,
    named: list[uuid.UUID],
) -> list[uuid.UUID]:
    """The passages a single search would keep: the best ``top_k``, or with
    named resources the best ``widened_top_k`` plus each named resource's best few."""
    if not named:
        return ordered[: workspace.top_k]
    chosen = ordered[: workspace.widened_top_k]
    taken = set(chosen)
    per_resource: dict[uuid.UUID, int] = {}
    for pid in ordered:
        resource_id = found[pid].resource_id
        if resource_id not in named or per_resource.get(resource_id, 0) >= workspace.per_resource_k:
            continue
        per_resource[resource_id] = per_resource.get(resource_id, 0) + 1
        if pid not in taken:
            chosen.append(pid)
            taken.add(pid)
    position = {pid: i for i, pid in enumerate(ordered)}
    return sorted(chosen, key=position.__getitem__)
