"""Rate limits for the test suite: tests send many requests a minute with one
key, so the limits are set out of reach unless a test sets its own."""

from __future__ import annotations

GENEROUS_RATE_LIMITS = {
    "RATE_LIMIT_REQUESTS_PER_MINUTE": 1_000_000,
    "RATE_LIMIT_CHAT_PER_MINUTE": 1_000_000,
    "RATE_LIMIT_CHAT_PER_USER_PER_MINUTE": 1_000_000,
    "RATE_LIMIT_UPLOADS_PER_MINUTE": 1_000_000,
    "MAX_CONCURRENT_REQUESTS_PER_KEY": 1_000,
}
