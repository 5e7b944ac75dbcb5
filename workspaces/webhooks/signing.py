"""The Standard Webhooks signature, and the endpoint secret at rest.

A secret is ``whsec_`` and the base64 of 32 random bytes; the key of the
HMAC is those bytes. A delivery carries::

    webhook-id         the event's id (the same on every attempt)
    webhook-timestamp  seconds since the epoch, when this attempt was signed
    webhook-signature  "v1," + base64(HMAC-SHA256(key, f"{id}.{timestamp}.{body}"))

(https://www.standardwebhooks.com/). During a rotation nothing overlaps: a
delivery is signed with the secret current when it is posted.

Stored encrypted (Fernet, with a key derived from API_KEY_HASH_SECRET by
HKDF, as the end-user token secret is: workspaces/tokens.py): signing needs
the secret itself, so it cannot be hashed, but a database dump alone must
not let anyone forge deliveries.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

SECRET_PREFIX = "whsec_"  # noqa: S105 - the prefix of generated secrets
SECRET_BYTES = 32


def secret_new() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def _fernet() -> Fernet:
    key = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=None, info=b"daneshyar webhook signing secret"
    ).derive(settings.API_KEY_HASH_SECRET.encode())
    return Fernet(base64.urlsafe_b64encode(key))


def secret_encrypt(secret: str) -> str:
    return _fernet().encrypt(secret.encode()).decode()


def secret_decrypt(stored: str) -> str | None:
    """The plaintext secret; None when API_KEY_HASH_SECRET changed since (rotate it)."""
    try:
        return _fernet().decrypt(stored.encode()).decode()
    except InvalidToken:
        return None


def signature(*, secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header's value for one attempt."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signed_headers(*, secret: str, message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(secret=secret, message_id=message_id, timestamp=timestamp, body=body),
    }
