"""What the conversation brings to a turn: the earlier turns, the documents
the previous reply cited, and the subject the user chose when the previous
reply asked which one they meant."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from functools import cached_property

from chat import selectors
from chat.prompting import HistoryTurn
from chat.services.messages import StoredQuestion
from chat.services.turn.choice import asked_options, option_chosen
from languages import Language, question_language
from retrieval.filters import OPEN, Access
from workspaces.models import Workspace


@dataclass(frozen=True)
class TurnContext:
    # The message as the user sent it.
    question: str
    # The completed turns before it, oldest first (the workspace's history window).
    turns: list[HistoryTurn] = field(default_factory=list)
    # Documents the previous reply cited.
    cited: tuple[uuid.UUID, ...] = ()
    # The document the user picked from the previous reply's "which one do
    # you mean?" form, and the question that form asked about.
    chosen: uuid.UUID | None = None
    chosen_question: str | None = None

    @property
    def earlier_questions(self) -> list[str]:
        """The earlier user turns, oldest first."""
        return [turn.question for turn in self.turns]

    @cached_property
    def language(self) -> Language:
        """The turn's language: the question's, else the conversation's (languages/detect.py)."""
        return question_language(self.focus, self.earlier_questions)

    @property
    def focus(self) -> str:
        """The question this turn answers: the message, or after a choice the
        question asked before the form."""
        return self.chosen_question or self.question


def turn_context(
    *, workspace: Workspace, stored: StoredQuestion, question: str, access: Access = OPEN
) -> TurnContext:
    """The conversation before ``stored`` (read with the question when it was
    stored, else one query; one more after a "which one?" form). A form's
    option is read back only as a document ``access`` may read."""
    if stored.message.sequence == 0:
        return TurnContext(question=question)
    turns = stored.earlier
    if turns is None:  # a resumed turn
        turns = selectors.history_turns(
            session_id=stored.session.id,
            before_sequence=stored.message.sequence,
            turns=max(workspace.history_turns, 1),
        )
    if not turns:
        return TurnContext(question=question)
    last = turns[-1]
    context = TurnContext(question=question, turns=turns, cited=last.cited)
    options = asked_options(last, workspace=workspace, access=access)
    chosen = option_chosen(question, options) if options else None
    if chosen is not None:
        return replace(context, chosen=chosen.resource_id, chosen_question=last.question)
    return context
