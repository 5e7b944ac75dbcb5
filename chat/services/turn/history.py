"""What the conversation brings to a turn: the earlier turns, the documents
the previous reply cited, the subject the user chose when the previous
reply asked which one they meant, and the language the turn is held in —
decided here, once, and read by every phase from the context."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from chat import selectors
from chat.prompting import HistoryTurn
from chat.services.messages import StoredQuestion
from chat.services.turn.choice import chosen_option
from languages import Language, question_language
from retrieval.filters import OPEN, Access
from workspaces.models import Workspace


@dataclass(frozen=True)
class TurnContext:
    # The message as the user sent it.
    question: str
    # The turn's language: its question's (after a choice, the question asked
    # before the form), else the conversation's latest that tells, else
    # English (languages.question_language). Every phase reads it here.
    language: Language
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

    @property
    def focus(self) -> str:
        """The question this turn answers: the message, or after a choice the
        question asked before the form."""
        return self.chosen_question or self.question


def turn_context(
    *, workspace: Workspace, stored: StoredQuestion, question: str, access: Access = OPEN
) -> TurnContext:
    """The conversation before ``stored`` (read with the question when it was
    stored, else one query; one more after a "which one?" form), and the
    turn's language. A form's option is read back only as a document
    ``access`` may read."""
    turns = _earlier_turns(workspace, stored)
    last = turns[-1] if turns else None
    chosen = chosen_option(question, last, workspace=workspace, access=access)
    chosen_question = last.question if last is not None and chosen is not None else None
    return TurnContext(
        question=question,
        language=question_language(chosen_question or question, [turn.question for turn in turns]),
        turns=turns,
        cited=last.cited if last is not None else (),
        chosen=chosen.resource_id if chosen is not None else None,
        chosen_question=chosen_question,
    )


def _earlier_turns(workspace: Workspace, stored: StoredQuestion) -> list[HistoryTurn]:
    if stored.message.sequence == 0:
        return []
    if stored.earlier is not None:
        return stored.earlier
    # A resumed turn.
    return selectors.history_turns(
        session_id=stored.session.id,
        before_sequence=stored.message.sequence,
        turns=max(workspace.history_turns, 1),
    )
