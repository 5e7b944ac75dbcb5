from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from daneshyar.database import database_from_url
from daneshyar.env import env_bool, env_int, env_url

ROOT = Path(__file__).resolve().parents[2]


def test_env_readers_reject_malformed_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("X_INT", "twelve")
    with pytest.raises(ImproperlyConfigured, match="X_INT must be an integer"):
        env_int("X_INT", 1)
    monkeypatch.setenv("X_INT", "0")
    with pytest.raises(ImproperlyConfigured, match="X_INT must be at least 1"):
        env_int("X_INT", 1, minimum=1)
    monkeypatch.setenv("X_BOOL", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X_BOOL must be a boolean"):
        env_bool("X_BOOL", False)
    monkeypatch.setenv("X_URL", "mysql://db/x")
    with pytest.raises(ImproperlyConfigured, match="X_URL must be a URL with scheme"):
        env_url("X_URL", None, schemes=("postgresql",))


def test_database_url_is_parsed() -> None:
    db = database_from_url("postgresql://u:p%40ss@db.example:6543/daneshyar?sslmode=require", conn_max_age=0)
    assert (db["NAME"], db["USER"], db["PASSWORD"], db["HOST"], db["PORT"]) == (
        "daneshyar",
        "u",
        "p@ss",
        "db.example",
        "6543",
    )
    assert db["OPTIONS"] == {"sslmode": "require"}
    socket = database_from_url("postgresql://postgres@/daneshyar?host=/run/pg", conn_max_age=0)
    assert socket["HOST"] == "/run/pg"


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("MAX_UPLOAD_BYTES", "lots", "MAX_UPLOAD_BYTES must be an integer"),
        ("GENERATION_BACKEND", "llamacpp", "GENERATION_BACKEND must be one of"),
        ("DATABASE_URL", "sqlite:///db.sqlite3", "DATABASE_URL must be a URL with scheme"),
        ("DEBUG", "sometimes", "DEBUG must be a boolean"),
        ("WIDGET_DEMO_WORKSPACE", "demo", "WIDGET_DEMO_WORKSPACE must be a UUID"),
        ("GENERATION_MODELS", "[{", "GENERATION_MODELS must be valid JSON"),
        ("EMBEDDING_BACKEND", "tensorflow", "EMBEDDING_BACKEND must be one of"),
        ("EMBEDDING_ONNX_PRECISION", "int4", "EMBEDDING_ONNX_PRECISION must be one of"),
        ("EMBEDDING_DEVICE", "cuda", "EMBEDDING_BACKEND=onnx runs on the CPU"),
        ("INGEST_TASK_TIME_LIMIT", "1800", "INGEST_TASK_TIME_LIMIT must be greater than"),
        ("INGEST_TASK_TIME_LIMIT", "4000", "INGEST_TASK_TIME_LIMIT must be at most 3300"),
        ("INGEST_MAX_COMPRESSION_RATIO", "1", "INGEST_MAX_COMPRESSION_RATIO must be at least 2"),
    ],
)
def test_malformed_environment_stops_start_with_a_clear_message(
    variable: str, value: str, message: str
) -> None:
    env = {**os.environ, variable: value, "DJANGO_SETTINGS_MODULE": "daneshyar.settings"}
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert message in result.stderr


def test_every_variable_is_documented() -> None:
    source = (ROOT / "daneshyar" / "settings.py").read_text()
    variables = set(re.findall(r'env_[a-z_]+\(\s*"([A-Z][A-Z0-9_]+)"', source))
    assert len(variables) > 30
    docs = (ROOT / "docs" / "configuration.md").read_text()
    example = (ROOT / ".env.example").read_text()
    assert sorted(v for v in variables if f"`{v}`" not in docs) == []
    assert sorted(v for v in variables if not re.search(rf"^#? ?{v}=", example, re.M)) == []
