"""Set Django up for a benchmark on its own database (same server as the app).

Benchmarks never touch the application's database: each uses
``daneshyar_bench_<name>``, created and migrated on first use and kept
between runs (data loading is the slow part).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def setup(name: str) -> None:
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "daneshyar.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import django

    django.setup()
    setup_database(name)


def setup_database(name: str) -> None:
    """Point the default connection at ``daneshyar_bench_<name>``, created and migrated."""
    from django.core.management import call_command
    from django.db import connection

    database = f"daneshyar_bench_{name}"
    connection.close()
    connection.settings_dict["NAME"] = "postgres"
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database])
        if cursor.fetchone() is None:
            cursor.execute(f'CREATE DATABASE "{database}"')
    connection.close()
    connection.settings_dict["NAME"] = database
    call_command("migrate", verbosity=0)
