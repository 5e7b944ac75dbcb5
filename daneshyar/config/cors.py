"""CORS settings (django-cors-headers), merged into daneshyar/settings.py.

No origin is allowed globally: a request is allowed per workspace
(``Workspace.allowed_origins``) by the ``check_request_enabled`` handler in
workspaces/cors.py, on the end-user routes, for end-user tokens only.
Preflights under /api/v1/ are answered without credentials. No cookies:
tokens travel in ``Authorization``, so no ``Access-Control-Allow-Credentials``.
"""

from __future__ import annotations

from typing import Any

SETTINGS: dict[str, Any] = {
    "CORS_URLS_REGEX": r"^/api/v1/",
    "CORS_ALLOWED_ORIGINS": [],
    "CORS_ALLOW_CREDENTIALS": False,
    "CORS_ALLOW_METHODS": ["DELETE", "GET", "OPTIONS", "PATCH", "POST"],
    # Not X-API-Key: a page never sends an organization's key.
    "CORS_ALLOW_HEADERS": ["accept", "authorization", "content-type", "idempotency-key", "last-event-id"],
    # What a page may read of a response: the rate-limit state, and a replay.
    "CORS_EXPOSE_HEADERS": [
        "RateLimit-Limit",
        "RateLimit-Remaining",
        "RateLimit-Reset",
        "Retry-After",
        "Idempotent-Replayed",
    ],
    "CORS_PREFLIGHT_MAX_AGE": 600,
}
