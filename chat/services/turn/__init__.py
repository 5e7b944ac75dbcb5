"""One chat turn, in phases (one module each):

- ``request``: :class:`TurnRequest`, what each entrance builds from its input;
- ``prepare``: :func:`turn_prepare`, the one way in: check the request, plan
  the turn, store the question (everything that can be a 4xx);
- ``retrieve``: :func:`turn_retrieve`, the passages for the question;
- ``compose``: the prompt fitted into the model's window, the
  :class:`PreparedTurn` and its trace;
- ``generate``: :func:`turn_generate`, the model (no database), retries,
  degrading to the extractive engine, the guard;
- ``store``: :func:`turn_finish`, the reply stored, its API shape, resuming.

The phases are separate so that no transaction or database connection is
held while the model runs: the views release the request's connection
between :func:`turn_prepare` and :func:`turn_generate`, and the streaming
view runs generate + finish in a worker thread that completes whether or not
the client is still listening.
"""

from __future__ import annotations

from chat.services.turn.compose import PreparedTurn
from chat.services.turn.generate import (
    MAX_ATTEMPTS,
    RETRY_TEMPERATURE,
    GeneratedTurn,
    release_connection,
    turn_generate,
)
from chat.services.turn.prepare import prompt_budget, turn_prepare
from chat.services.turn.request import TurnRequest, TurnResume
from chat.services.turn.retrieve import turn_retrieve
from chat.services.turn.store import (
    reply_data,
    turn_complete,
    turn_error_details,
    turn_existing_reply,
    turn_finish,
    turn_resume_data,
)

__all__ = [
    "MAX_ATTEMPTS",
    "RETRY_TEMPERATURE",
    "GeneratedTurn",
    "PreparedTurn",
    "TurnRequest",
    "TurnResume",
    "prompt_budget",
    "release_connection",
    "reply_data",
    "turn_complete",
    "turn_error_details",
    "turn_existing_reply",
    "turn_finish",
    "turn_generate",
    "turn_prepare",
    "turn_resume_data",
    "turn_retrieve",
]
