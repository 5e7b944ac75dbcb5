"""Which database passage search reads: the replica when it is usable, else the primary.

Search is the one read that may lag: a passage that became ready a moment
ago is simply not found for that moment, and nothing is written from what
search reads. So with ``SEARCH_DATABASE_URL`` set, search runs on that
replica (alias ``search``), unless

- the replica is further behind than ``SEARCH_REPLICA_MAX_LAG_SECONDS``
  (a replica that has replayed everything it received counts as current,
  otherwise the lag is the age of the last transaction it replayed), or
- it cannot be reached, or a query on it fails (a restart, a query cancelled
  by a recovery conflict): the search is run again on the primary.

Either way the decision is kept for :data:`CHECK_SECONDS`, so a search costs
no extra round trip in the common case and a dead replica is not retried on
every request. Validating named resources (a 400 for an unknown id) reads
the primary: an id the client has just created must not be "unknown".
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

logger = logging.getLogger(__name__)

SEARCH_ALIAS = "search"
# How long a replica check (lag, reachability) is trusted, per process.
CHECK_SECONDS = 1.0

_LAG = """
SELECT CASE
    WHEN NOT pg_is_in_recovery() THEN 0
    WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0
    ELSE coalesce(extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()), 0)
END
"""

_state: dict[str, tuple[float, bool]] = {}
_lock = threading.Lock()


def configured() -> bool:
    return SEARCH_ALIAS in connections.settings


def replica_lag_seconds() -> float:
    """The replica's lag, in seconds (0 when it has replayed all it received)."""
    with connections[SEARCH_ALIAS].cursor() as cursor:
        cursor.execute(_LAG)
        row = cursor.fetchone()
    return float(row[0]) if row else 0.0


def search_alias() -> str:
    """The alias search should read now: ``search`` when configured and usable, else ``default``."""
    if not configured():
        return DEFAULT_DB_ALIAS
    now = time.monotonic()
    with _lock:
        cached = _state.get(SEARCH_ALIAS)
    if cached is not None and now - cached[0] < CHECK_SECONDS:
        return SEARCH_ALIAS if cached[1] else DEFAULT_DB_ALIAS
    try:
        lag = replica_lag_seconds()
        usable = lag <= settings.SEARCH_REPLICA_MAX_LAG_SECONDS
        if not usable:
            logger.warning("search replica is %.1f s behind: searching the primary", lag)
    except DatabaseError as error:
        connections[SEARCH_ALIAS].close()
        logger.warning("search replica unavailable (%s): searching the primary", error)
        usable = False
    with _lock:
        _state[SEARCH_ALIAS] = (now, usable)
    return SEARCH_ALIAS if usable else DEFAULT_DB_ALIAS


def replica_failed(error: Exception) -> None:
    """A query on the replica failed: use the primary until the next check."""
    logger.warning("search on the replica failed (%s): searching the primary", error)
    connections[SEARCH_ALIAS].close()
    with _lock:
        _state[SEARCH_ALIAS] = (time.monotonic(), False)


def reset() -> None:
    """Forget the last check (tests)."""
    with _lock:
        _state.clear()
