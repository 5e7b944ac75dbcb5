"""PostgreSQL sized to its machine (daneshyar/config/postgres.py, docs/configuration.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from daneshyar.config import postgres
from daneshyar.config.databases import default_database
from daneshyar.config.postgres import GB, MB, server_settings

ROOT = Path(__file__).resolve().parents[2]


def test_settings_follow_the_machine() -> None:
    assert server_settings(memory=24 * GB, cores=2) == {
        "shared_buffers": "6GB",
        "effective_cache_size": "18GB",
        "work_mem": "48MB",
        "maintenance_work_mem": "3GB",
        "autovacuum_work_mem": "512MB",
        "max_parallel_maintenance_workers": "1",
    }
    big = server_settings(memory=256 * GB, cores=32)
    assert (big["shared_buffers"], big["work_mem"], big["maintenance_work_mem"]) == ("8GB", "64MB", "4GB")
    assert big["max_parallel_maintenance_workers"] == "8"
    small = server_settings(memory=1 * GB, cores=1)
    assert small["shared_buffers"] == "256MB"
    assert (small["work_mem"], small["maintenance_work_mem"]) == ("4MB", "128MB")
    assert small["max_parallel_maintenance_workers"] == "0"


def test_variables_override_each_setting() -> None:
    settings = server_settings(
        memory=24 * GB,
        cores=2,
        overrides={"POSTGRES_SHARED_BUFFERS": "1GB", "POSTGRES_MAX_PARALLEL_MAINTENANCE_WORKERS": "0"},
    )
    assert settings["shared_buffers"] == "1GB"
    assert settings["max_parallel_maintenance_workers"] == "0"
    assert settings["work_mem"] == "48MB"


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("POSTGRES_WORK_MEM", "lots"),
        ("POSTGRES_WORK_MEM", "64 MB; DROP"),
        ("POSTGRES_SHARED_BUFFERS", "1gb"),
        ("POSTGRES_MAX_PARALLEL_MAINTENANCE_WORKERS", "-1"),
    ],
)
def test_a_malformed_variable_names_itself(variable: str, value: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=variable):
        postgres.from_environment({variable: value})


def test_the_embedded_server_is_given_the_computed_settings(tmp_path: Path) -> None:
    """Found: the embedded server ran on PostgreSQL's defaults (128 MB of
    shared buffers, 4 MB of work memory on a 24 GB machine). Without
    DATABASE_URL the settings hand it the machine's figures; the next test
    shows a server started with such settings runs with them."""
    database = default_database(None, conn_max_age=0, data_dir=tmp_path, test_name=None)
    assert database["ENGINE"] == "daneshyar.embedded_db"
    assert database["OPTIONS"]["embedded_server_settings"] == postgres.from_environment()


def test_a_new_cluster_starts_with_the_settings(tmp_path: Path) -> None:
    """The settings are written between initdb and the first start, so a
    fresh data directory never runs on the defaults."""
    script = (
        "import json, psycopg\n"
        "from pathlib import Path\n"
        "from daneshyar.embedded_db.server import ensure_server\n"
        f"socket = ensure_server(Path({str(tmp_path / 'postgres')!r}),"
        " settings={'shared_buffers': '48MB', 'work_mem': '7MB'})\n"
        "with psycopg.connect(host=socket, user='postgres', dbname='postgres') as conn:\n"
        "    shown = [conn.execute(f'SHOW {p}').fetchone()[0] for p in ('shared_buffers', 'work_mem')]\n"
        "print(json.dumps(shown))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == ["48MB", "7MB"]
    assert postgres.parse_size("48MB") == 48 * MB
