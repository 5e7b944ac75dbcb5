"""A transaction PostgreSQL aborted for another's sake, run again.

Passage writes keep each workspace's lexeme counts by statement-level
triggers (retrieval migration 0003), every statement's upserts in one order,
so two statements never deadlock. A transaction of several such statements
still can: ingestion replaces a document's passages with a DELETE and then
INSERTs, and between the two it holds the rows of the lexemes it took out
while a deletion of other documents (one statement) holds a row the INSERT
needs and waits for one the ingestion holds. PostgreSQL breaks the cycle by
aborting one of them (``deadlock_detected``, 40P01; a serialization failure,
40001, is the same kind of loss). Either side may be the one: the request
that deleted is then run again, from the start of its transaction, a few
times, instead of answering 500 (ingestion has its own retries).

Only a transaction this function begins can be run again: called inside
another one (a test's, or a caller's ``atomic``), the error goes up.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from django.db import OperationalError, transaction

T = TypeVar("T")

# deadlock_detected, serialization_failure.
RETRIED_SQLSTATES = frozenset({"40P01", "40001"})
ATTEMPTS = 4
# Seconds before the next attempt, times the attempt's number (and a jitter
# of up to as much again): the other transaction commits meanwhile.
BACKOFF_SECONDS = 0.05


def atomic_retried(function: Callable[[], T], *, attempts: int = ATTEMPTS) -> T:
    """``function()`` in a transaction of its own, run again when PostgreSQL
    aborted it to break a deadlock (module doc)."""
    nested = transaction.get_connection().in_atomic_block
    for attempt in range(1, attempts + 1):
        try:
            with transaction.atomic():
                return function()
        except OperationalError as exc:
            if nested or attempt == attempts or _sqlstate(exc) not in RETRIED_SQLSTATES:
                raise
        time.sleep(BACKOFF_SECONDS * attempt * (1 + random.random()))  # noqa: S311 (a jitter)
    raise AssertionError("unreachable")  # pragma: no cover


def _sqlstate(exc: BaseException) -> str | None:
    cause = exc.__cause__
    return getattr(cause, "sqlstate", None) if cause is not None else None
