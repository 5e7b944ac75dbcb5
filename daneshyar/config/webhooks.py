"""Webhooks (workspaces/webhooks/, docs/webhooks.md).

``daneshyar/settings.py`` imports these names; each is listed with its default
in docs/configuration.md and .env.example.
"""

from __future__ import annotations

from daneshyar.env import env_int, env_list

__all__ = [
    "WEBHOOK_RETRY_DELAYS",
    "WEBHOOK_SWEEP_SECONDS",
    "WEBHOOK_TIMEOUT_SECONDS",
]

# Which addresses a delivery may reach: OUTBOUND_ALLOW_PRIVATE
# (daneshyar/config/outbound.py; WEBHOOK_ALLOW_PRIVATE is its old name).
# How long one delivery attempt may take, connection, request and the whole
# answer together (the connection itself at most 5 s of it).
WEBHOOK_TIMEOUT_SECONDS = env_int("WEBHOOK_TIMEOUT_SECONDS", 10, minimum=1, maximum=60)
# How often beat posts the deliveries that are due (retries, and any whose
# worker was lost).
WEBHOOK_SWEEP_SECONDS = env_int("WEBHOOK_SWEEP_SECONDS", 30, minimum=1)
# The wait before each retry, in seconds: 30 s, 2 min, 10 min, 1 h, 4 h, then
# every 8 h: 8 attempts over about 25 hours, as the Standard Webhooks guidance
# suggests. One attempt more than there are delays; then ``failed``.
WEBHOOK_RETRY_DELAYS: tuple[int, ...] = tuple(
    max(0, int(delay))
    for delay in env_list("WEBHOOK_RETRY_DELAYS", ["30", "120", "600", "3600", "14400", "28800", "28800"])
)
