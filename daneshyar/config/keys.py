"""The secrets: given in the environment, or for local runs generated once
and kept in DATA_DIR (created then, with the key file readable by its owner
only)."""

from __future__ import annotations

import base64
import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured


def secret_key(configured: str | None, *, data_dir: Path) -> str:
    """SECRET_KEY, or for local runs one generated once and kept in DATA_DIR."""
    if configured:
        if len(configured) < 32:
            raise ImproperlyConfigured("SECRET_KEY must be at least 32 characters long")
        return configured
    path = data_dir / "secret_key"
    if path.exists():
        return path.read_text().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    path.touch(mode=0o600)
    path.write_text(key)
    return key


def certificate_signing_key(configured: str | None, *, data_dir: Path) -> str:
    """CERTIFICATE_SIGNING_KEY (``[key_id:]`` + 32 bytes, base64url), or for
    local runs one generated once and kept in DATA_DIR."""
    if not configured:
        path = data_dir / "certificate_signing_key"
        if not path.exists():
            data_dir.mkdir(parents=True, exist_ok=True)
            path.touch(mode=0o600)
            path.write_text(base64.urlsafe_b64encode(secrets.token_bytes(32)).decode().rstrip("="))
        configured = path.read_text().strip()
    seed = configured.rpartition(":")[2]
    try:
        raw = base64.urlsafe_b64decode(seed + "=" * (-len(seed) % 4))
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise ImproperlyConfigured("CERTIFICATE_SIGNING_KEY must be [key_id:] and 32 bytes in base64url")
    return configured
