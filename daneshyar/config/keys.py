"""The deployment's secrets: SECRET_KEY, CERTIFICATE_SIGNING_KEY,
TRANSCRIPT_PSEUDONYM_KEY and API_KEY_HASH_SECRET.

Each comes from the environment, else from the file of its name in DATA_DIR
(``secret_key``, …) that ``make run`` generates (``daneshyar/keygen.py``).
Settings only read: importing them never writes a key, so a Docker image
built with ``collectstatic`` carries none. Without a value the process
refuses to start, except for an image build (``DANESHYAR_BUILD``), which
serves nothing and signs nothing.
"""

from __future__ import annotations

import base64
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

SECRET_NAMES = ("SECRET_KEY", "CERTIFICATE_SIGNING_KEY", "TRANSCRIPT_PSEUDONYM_KEY", "API_KEY_HASH_SECRET")
MIN_SECRET_CHARS = 32
# Values published with the project at some point: whoever read them can
# forge sessions, CSRF tokens, API key hashes and pseudonyms.
KNOWN_PLACEHOLDERS = frozenset(
    {
        "change-me-to-50-random-characters-change-me-to-50-random",  # .env.example until 2026-12
        "build-only-not-a-secret-build-only-not-a-secret",  # the Dockerfile's build value until 2026-12
    }
)
_PLACEHOLDER_WORDS = ("change-me", "changeme", "change_me", "replace-me", "not-a-secret")
_HOW = (
    "Set it in the environment (`python -m daneshyar.keygen` prints new values for every secret; "
    "docs/configuration.md). Only `make run` generates its own."
)


def secret_file(data_dir: Path, name: str) -> Path:
    """Where ``make run`` keeps ``name`` (``SECRET_KEY`` -> ``DATA_DIR/secret_key``)."""
    return data_dir / name.lower()


def required_secret(
    name: str, configured: str | None, *, data_dir: Path, debug: bool = False, build: bool = False
) -> str:
    """The secret ``name``: from the environment, else from its file in
    DATA_DIR (read, never written); refused when missing or a placeholder.
    ``build``: an image build, where a missing secret is left empty."""
    value = configured or _read(secret_file(data_dir, name))
    if not value:
        if build:
            return ""
        raise ImproperlyConfigured(f"{name} is required. {_HOW}")
    if name == "CERTIFICATE_SIGNING_KEY":
        return _signing_key(value)
    problem = _weakness(value, debug=debug)
    if problem:
        raise ImproperlyConfigured(f"{name} {problem}. {_HOW}")
    return value


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except FileNotFoundError:
        return None


def _weakness(value: str, *, debug: bool) -> str | None:
    lowered = value.lower()
    if value in KNOWN_PLACEHOLDERS or any(word in lowered for word in _PLACEHOLDER_WORDS):
        return "is a published placeholder, not a secret"
    if value.startswith("django-insecure-") and not debug:
        return "is one of Django's development keys (django-insecure-…), refused unless DEBUG is on"
    if len(value) < MIN_SECRET_CHARS:
        return f"must be at least {MIN_SECRET_CHARS} characters long"
    if len(set(value)) < 5:
        return "must not repeat a few characters (at least 5 different ones)"
    return None


def _signing_key(value: str) -> str:
    """``[key_id:]`` + 32 bytes, base64url."""
    seed = value.rpartition(":")[2]
    try:
        raw = base64.urlsafe_b64decode(seed + "=" * (-len(seed) % 4))
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise ImproperlyConfigured("CERTIFICATE_SIGNING_KEY must be [key_id:] and 32 bytes in base64url")
    return value
