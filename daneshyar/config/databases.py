"""``DATABASES``: the primary (DATABASE_URL, or the embedded server) and
the optional search replica."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from daneshyar.config import postgres
from daneshyar.database import database_from_url


def default_database(
    url: str | None, *, conn_max_age: int, data_dir: Path, test_name: str | None, pool_size: int = 0
) -> dict[str, Any]:
    if url:
        database = database_from_url(url, conn_max_age=conn_max_age)
    else:
        # Embedded PostgreSQL 18 + pgvector, started on first connection.
        database = {
            "ENGINE": "daneshyar.embedded_db",
            "NAME": "daneshyar",
            "USER": "postgres",
            "OPTIONS": {
                "embedded_data_dir": str(data_dir / "postgres"),
                # Memory and parallelism sized to this machine (POSTGRES_* variables override).
                "embedded_server_settings": postgres.from_environment(),
            },
            "CONN_MAX_AGE": conn_max_age,
            "CONN_HEALTH_CHECKS": conn_max_age > 0,
        }
    # Several checkouts (or test runs) can share one server with distinct test DBs.
    database["TEST"] = {"NAME": test_name}
    return pooled(database, pool_size)


def pooled(database: dict[str, Any], size: int) -> dict[str, Any]:
    """With ``size``, connections come from a pool of at most ``size`` per
    process (psycopg_pool, through Django's ``OPTIONS["pool"]``): a request
    takes one and gives it back when it ends, and a turn that lets its
    connection go during generation takes one back without reconnecting.
    Each connection is checked before it is handed out (an empty query), as
    ``CONN_HEALTH_CHECKS`` did. Persistent connections (``CONN_MAX_AGE``)
    do not apply then."""
    if not size:
        return database
    database["CONN_MAX_AGE"] = 0
    # Django then has the pool check each connection it hands out.
    database["CONN_HEALTH_CHECKS"] = True
    database["OPTIONS"]["pool"] = {
        "min_size": 1,
        "max_size": size,
        # A request waits this long for a free connection, then fails.
        "timeout": 10,
        "max_idle": 300,
    }
    return database


def search_database(url: str, *, conn_max_age: int, pool_size: int = 0) -> dict[str, Any]:
    """A streaming replica that passage search reads from (docs/scaling.md)."""
    database = pooled(database_from_url(url, conn_max_age=conn_max_age), pool_size)
    # A replica that does not answer must not hold a search up for long.
    database["OPTIONS"].setdefault("connect_timeout", "2")
    # Tests read the primary's test database through this alias.
    database["TEST"] = {"MIRROR": "default"}
    return database
