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
from tests.project import python_run

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
        ("EMBEDDING_DEVICE", "cuda", "EMBEDDING_BACKEND=e5onnx runs on the CPU"),
        ("INGEST_TASK_TIME_LIMIT", "1800", "INGEST_TASK_TIME_LIMIT must be greater than"),
        ("INGEST_TASK_TIME_LIMIT", "4000", "INGEST_TASK_TIME_LIMIT must be at most 3300"),
        ("INGEST_MAX_COMPRESSION_RATIO", "1", "INGEST_MAX_COMPRESSION_RATIO must be at least 2"),
    ],
)
def test_malformed_environment_stops_start_with_a_clear_message(
    variable: str, value: str, message: str
) -> None:
    env = {**os.environ, variable: value, "DJANGO_SETTINGS_MODULE": "daneshyar.settings"}
    result = python_run("import django; django.setup()", env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert message in result.stderr


def test_every_variable_is_documented() -> None:
    modules = [ROOT / "daneshyar" / "settings.py", *sorted((ROOT / "daneshyar" / "config").glob("*.py"))]
    source = "\n".join(path.read_text() for path in modules)
    variables = set(re.findall(r'env_[a-z_]+\(\s*"([A-Z][A-Z0-9_]+)"', source))
    assert len(variables) > 30
    docs = (ROOT / "docs" / "configuration.md").read_text()
    example = (ROOT / ".env.example").read_text()
    assert sorted(v for v in variables if f"`{v}`" not in docs) == []
    assert sorted(v for v in variables if not re.search(rf"^#? ?{v}=", example, re.M)) == []


SECRETS = ("SECRET_KEY", "CERTIFICATE_SIGNING_KEY", "TRANSCRIPT_PSEUDONYM_KEY", "API_KEY_HASH_SECRET")


def _start(data_dir: Path, **variables: str) -> subprocess.CompletedProcess[str]:
    """Load the production settings in a fresh process: DEBUG off, not under
    ``make run``, none of the secrets unless given, ``data_dir`` as DATA_DIR."""
    env = {k: v for k, v in os.environ.items() if k not in (*SECRETS, "DANESHYAR_BUILD", "DEBUG")}
    env.update(DJANGO_SETTINGS_MODULE="daneshyar.settings", DANESHYAR_DATA_DIR=str(data_dir), **variables)
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings as s; "
            "print('PROMPT_TRACE_ENABLED', s.PROMPT_TRACE_ENABLED)",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _secrets(**overrides: str) -> dict[str, str]:
    from daneshyar.keygen import new_secret

    return {**{name: new_secret(name) for name in SECRETS}, **overrides}


def test_settings_import_writes_no_key_file(tmp_path: Path) -> None:
    """Importing settings (as the image build does for collectstatic) never
    generates a key: a key written there would ship in the image."""
    build = _start(tmp_path, DANESHYAR_BUILD="1")
    assert build.returncode == 0, build.stderr
    refused = _start(tmp_path)
    assert refused.returncode != 0
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("missing", SECRETS)
def test_production_settings_refuse_to_start_without_each_secret(tmp_path: Path, missing: str) -> None:
    given = {k: v for k, v in _secrets().items() if k != missing}
    result = _start(tmp_path, **given)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and f"{missing} is required" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("change-me-to-50-random-characters-change-me-to-50-random", "published placeholder"),
        ("build-only-not-a-secret-build-only-not-a-secret", "published placeholder"),
        ("django-insecure-" + "k3v9q8x7w2m4n5b6" * 3, "Django's development keys"),
        ("short-but-random-8f3k2", "at least 32 characters"),
        ("ab" * 30, "at least 5 different"),
    ],
)
def test_placeholder_and_weak_secret_keys_are_refused(tmp_path: Path, value: str, message: str) -> None:
    result = _start(tmp_path, **_secrets(SECRET_KEY=value))
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr and message in result.stderr


def test_django_development_key_is_accepted_with_debug_on(tmp_path: Path) -> None:
    development_key = "django-insecure-" + "k3v9q8x7w2m4n5b6" * 3
    result = _start(tmp_path, DEBUG="true", **_secrets(SECRET_KEY=development_key))
    assert result.returncode == 0, result.stderr


def test_env_example_as_copied_refuses_to_start_until_its_secrets_are_set(tmp_path: Path) -> None:
    """docker-compose.yml says to copy .env.example to .env: as copied, the
    service does not start on a published placeholder, and once the secrets
    are set it starts without prompt traces."""
    example = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        name, sep, value = line.partition("=")
        if sep and not line.startswith("#"):
            example[name.strip()] = value.strip()
    assert example.get("PROMPT_TRACE_ENABLED", "false").lower() in {"false", "0", "no", "off", ""}
    as_copied = _start(tmp_path, **example)
    assert as_copied.returncode != 0 and "ImproperlyConfigured" in as_copied.stderr
    completed = _start(tmp_path, **{**example, **_secrets()})
    assert completed.returncode == 0, completed.stderr
    assert "PROMPT_TRACE_ENABLED False" in completed.stdout


def test_make_run_secrets_keep_an_earlier_data_dir_valid(tmp_path: Path) -> None:
    """A DATA_DIR from before the secrets had their own files: API keys were
    hashed with its secret_key, so make run starts API_KEY_HASH_SECRET from it."""
    from daneshyar.keygen import local_secrets_ensure

    old = "k" * 10 + "an-earlier-generated-secret-key-0123456789"
    (tmp_path / "secret_key").write_text(old)
    values = local_secrets_ensure(tmp_path)
    assert values["SECRET_KEY"] == values["API_KEY_HASH_SECRET"] == old
    assert local_secrets_ensure(tmp_path) == values
    result = _start(tmp_path)
    assert result.returncode == 0, result.stderr


def test_behind_tls_proxy_cookies_are_secure_with_hsts_and_check_deploy_is_clean(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DANESHYAR_BUILD", "DEBUG")}
    env.update(
        DJANGO_SETTINGS_MODULE="daneshyar.settings",
        DANESHYAR_DATA_DIR=str(tmp_path),
        BEHIND_TLS_PROXY="true",
        **_secrets(),
    )
    shown = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings as s; "
            "print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS, "
            "s.SECURE_HSTS_INCLUDE_SUBDOMAINS)",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.stdout.split() == ["True", "True", "31536000", "False"], shown.stderr
    check = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # The two HSTS opt-ins (includeSubDomains, preload) are the deployment's choice.
    assert sorted(set(re.findall(r"\(([a-z_.]+\.[WE]\d+)\)", check.stderr + check.stdout))) == [
        "security.W005",
        "security.W021",
    ]


def test_an_image_build_configuration_does_not_serve(tmp_path: Path) -> None:
    """DANESHYAR_BUILD lets the image build load settings without secrets;
    the web application and the worker refuse to run with it."""
    env = {k: v for k, v in os.environ.items() if k not in SECRETS}
    env.update(
        DJANGO_SETTINGS_MODULE="daneshyar.settings", DANESHYAR_DATA_DIR=str(tmp_path), DANESHYAR_BUILD="1"
    )
    result = python_run("import daneshyar.wsgi", env)
    assert result.returncode != 0 and "DANESHYAR_BUILD is for building the image only" in result.stderr
    worker = subprocess.run(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "daneshyar",
            "worker",
            "--pool",
            "solo",
            "--loglevel",
            "ERROR",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert worker.returncode != 0 and "DANESHYAR_BUILD is for building the image only" in worker.stderr
