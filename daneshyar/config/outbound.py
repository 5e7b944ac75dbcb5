"""Outbound HTTP (daneshyar/outbound/): what every fetch and post may reach.

``daneshyar/settings.py`` imports these names; each is listed with its default
in docs/configuration.md and .env.example.
"""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

from daneshyar.env import env_bool

__all__ = ["OUTBOUND_ALLOW_PRIVATE"]


def _allow_private() -> bool:
    """OUTBOUND_ALLOW_PRIVATE, or its old name WEBHOOK_ALLOW_PRIVATE (deprecated:
    it switched web sources too). Both set and different is a mistake to stop on,
    not one to settle silently."""
    new = env_bool("OUTBOUND_ALLOW_PRIVATE", False)
    old = env_bool("WEBHOOK_ALLOW_PRIVATE", False)
    if "OUTBOUND_ALLOW_PRIVATE" not in os.environ:
        return old
    if "WEBHOOK_ALLOW_PRIVATE" in os.environ and old != new:
        raise ImproperlyConfigured(
            "OUTBOUND_ALLOW_PRIVATE and WEBHOOK_ALLOW_PRIVATE (its deprecated name) disagree; set only "
            "OUTBOUND_ALLOW_PRIVATE."
        )
    return new


# Connect to loopback, private, link-local and reserved addresses too (webhook
# receivers and web sources on the same machine or network). Off: refused (SSRF).
OUTBOUND_ALLOW_PRIVATE = _allow_private()
