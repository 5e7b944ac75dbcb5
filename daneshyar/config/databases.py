"""``DATABASES``: the primary (DATABASE_URL, or the embedded server) and
the optional search replica."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from daneshyar.config import postgres
from daneshyar.database import database_from_url


def default_database(
    url: str | None, *, conn_max_age: int, data_dir: Path, test_name: str | None
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
    return database


def search_database(url: str, *, conn_max_age: int) -> dict[str, Any]:
    """A streaming replica that passage search reads from (docs/scaling.md)."""
    database = database_from_url(url, conn_max_age=conn_max_age)
    # A replica that does not answer must not hold a search up for long.
    database["OPTIONS"].setdefault("connect_timeout", "2")
    # Tests read the primary's test database through this alias.
    database["TEST"] = {"MIRROR": "default"}
    return database
