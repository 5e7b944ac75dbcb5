"""DATABASE_POOL_SIZE: a process takes its connections from a pool, so a
connection given back (at the end of a request, or by a turn while the model
generates) is taken again without reconnecting; without it, each thread keeps
one persistent connection (CONN_MAX_AGE)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.db import connection

from daneshyar.config.databases import default_database
from tests.project import python_run

pytestmark = pytest.mark.django_db


def test_the_setting_turns_persistent_connections_into_a_pool(tmp_path: Path) -> None:
    plain = default_database(None, conn_max_age=60, data_dir=tmp_path, test_name=None)
    assert plain["CONN_MAX_AGE"] == 60 and "pool" not in plain["OPTIONS"]
    pool = default_database(None, conn_max_age=60, data_dir=tmp_path, test_name=None, pool_size=8)
    assert pool["CONN_MAX_AGE"] == 0 and pool["CONN_HEALTH_CHECKS"] is True
    assert pool["OPTIONS"]["pool"]["max_size"] == 8 and pool["OPTIONS"]["pool"]["min_size"] == 1


PROBE = """
import django
django.setup()
from django.db import connection

def backend_pid():
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]

first = backend_pid()
connection.close()  # what the end of a request, or a turn before generation, does
second = backend_pid()
pooled = connection.pool is not None
connection.close()
print(pooled, first == second)
"""


@pytest.mark.parametrize(("size", "expected"), [("1", "True True"), ("0", "False False")])
def test_a_connection_given_back_is_taken_again_without_reconnecting(size: str, expected: str) -> None:
    """The same server process (backend pid) answers after close() with a
    pool: the connection went back to it, not away. Without one (and
    CONN_MAX_AGE 0), close() ends the connection."""
    params = connection.get_connection_params()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "daneshyar.settings",
        "DATABASE_URL": f"postgresql://postgres@/{connection.settings_dict['NAME']}?host={params['host']}",
        "DATABASE_CONN_MAX_AGE": "0",
        "DATABASE_POOL_SIZE": size,
    }
    result = python_run(PROBE, env, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == expected
