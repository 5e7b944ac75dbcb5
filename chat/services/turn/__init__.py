"""One chat turn, in phases. Its modules, in the order a turn meets them:

- ``request``: :class:`TurnRequest` and :class:`TurnResume`, what each
  entrance builds from its input;
- ``prepare``: :func:`turn_prepare`, the one way in: check the request, plan
  the turn (:func:`prompt_budget`), store the question (everything that can
  be a 4xx), then the phases below, each called once;
- ``scope``: who may read what in the turn (the filters, the groups, an
  end-user token's resources): :func:`turn_access`;
- ``history``: the :class:`TurnContext`, what the conversation brings and
  the turn's language;
- ``choice``: the answer to a "which one do you mean?" form, which document
  the user chose;
- ``smalltalk``: greetings and thanks, and their reply (no retrieval);
- ``followup_search``: the question embedded ahead, and searched with the
  conversation (its queries, the rewrite in flight, the lists fused);
- ``rewrite``: a generative model's standalone question for a follow-up;
- ``retrieve``: :func:`turn_retrieve`, the passages the turn may search and
  cite (``Retrieval``);
- ``decide``: answer, no answer, ask which one (``Decision``);
- ``clarify``: the "which one do you mean?" form;
- ``references``: where a question points at a subject the conversation
  never named ("this animal");
- ``naming``: what a question names, and whether the documents cover it;
- ``subjects``: each document's own naming words and the shape of what it
  says, which make documents parallel;
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

Each phase keeps its own helpers, and :func:`turn_prepare` calls each
phase once, so that a reader following a turn seldom goes back to a file
already left (``bench/turn_walk.py``, a static walk of the calls from
:func:`turn_prepare`): before the phases were regrouped, 112 returns to a
file already left over 49 files, prepare.py entered 20 times (62
counting only the 27 files of chat/); after, 96, prepare.py entered 16
times (46 within chat/). Most of those left are calls into modules beneath the
turn (the search, the message writer, the answerability score, the
prompt), each entered once per helper it lends.
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
