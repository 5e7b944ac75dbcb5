"""API key material: generation, hashing, display prefix.

Keys are 256-bit random values, so a single keyed hash (HMAC-SHA256) is the
right tool: a slow password hasher protects guessable secrets and would only
add latency to every request here.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from django.conf import settings

KEY_PREFIX = "dk_live_"
# 32 random bytes -> 43 URL-safe characters.
_RANDOM_BYTES = 32
DISPLAY_PREFIX_LENGTH = len(KEY_PREFIX) + 6
_KEY_PATTERN = re.compile(r"^dk_live_[A-Za-z0-9_-]{32,128}$")


def generate_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(_RANDOM_BYTES)


def hash_key(plaintext: str) -> str:
    secret = settings.API_KEY_HASH_SECRET.encode()
    return hmac.new(secret, plaintext.encode(), hashlib.sha256).hexdigest()


def display_prefix(plaintext: str) -> str:
    return plaintext[:DISPLAY_PREFIX_LENGTH]


def looks_like_key(value: str) -> bool:
    return bool(_KEY_PATTERN.match(value))
