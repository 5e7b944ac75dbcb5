"""Rate limits per API key, and per (key, end user) for chat turns.

Buckets, per minute (sliding window counters from the ``limits`` library —
the storage layer of Flask-Limiter and slowapi — kept in Redis with atomic
Lua scripts, so every web process shares them; without REDIS_URL they are
per process):

============  ==============================================  =====================================
bucket        counts                                          limit
============  ==============================================  =====================================
requests      every API request of a key                      RATE_LIMIT_REQUESTS_PER_MINUTE
chat          chat turns of a key (native, stream, OpenAI)    RATE_LIMIT_CHAT_PER_MINUTE
chat_user     chat turns of one end user of a key             RATE_LIMIT_CHAT_PER_USER_PER_MINUTE
uploads       document uploads of a key                       RATE_LIMIT_UPLOADS_PER_MINUTE
============  ==============================================  =====================================

An end-user token counts where a key would: its workspace's end-user tokens
share the per-key ``chat`` bucket (``EndUser.rate_identity``), each end user
has a ``requests`` bucket of their own (so one user cannot lock the others
out), and ``chat_user`` is per end user as with a key. The limits are its
workspace's and organization's.

A workspace's own limit, else its organization's, else the setting applies
(``RateLimitOverrides``, edited in the console). Over a limit: 429
``rate_limited`` with ``Retry-After``; every limited response (successes
too) carries ``RateLimit-Limit``, ``RateLimit-Remaining`` and
``RateLimit-Reset`` for the tightest bucket it used.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from limits import RateLimitItemPerMinute
from limits.storage import Storage, storage_from_string
from limits.strategies import SlidingWindowCounterRateLimiter
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from daneshyar.exceptions import ApplicationError
from workspaces.models import ApiKey, Organization, Workspace
from workspaces.principals import EndUser, Principal, rate_identity

BUCKET_SETTINGS = {
    "requests": ("rate_requests_per_minute", "RATE_LIMIT_REQUESTS_PER_MINUTE"),
    "chat": ("rate_chat_per_minute", "RATE_LIMIT_CHAT_PER_MINUTE"),
    "chat_user": ("rate_chat_per_user_per_minute", "RATE_LIMIT_CHAT_PER_USER_PER_MINUTE"),
    "uploads": ("rate_uploads_per_minute", "RATE_LIMIT_UPLOADS_PER_MINUTE"),
}
# Where a request records what it used, for the headers of its response.
REQUEST_ATTRIBUTE = "_daneshyar_rate_limits"


class RateLimited(ApplicationError):
    status_code = 429
    code = "rate_limited"
    default_message = "Too many requests. Try again later."


@dataclass(frozen=True)
class Usage:
    limit: int
    remaining: int
    reset_seconds: int

    def headers(self) -> dict[str, str]:
        return {
            "RateLimit-Limit": str(self.limit),
            "RateLimit-Remaining": str(self.remaining),
            "RateLimit-Reset": str(self.reset_seconds),
        }


_limiter: SlidingWindowCounterRateLimiter | None = None
_limiter_source: str | None = None
_lock = threading.Lock()


def limiter() -> SlidingWindowCounterRateLimiter:
    """The process's limiter on Redis (REDIS_URL), or in memory without it."""
    global _limiter, _limiter_source
    source = settings.RATE_LIMIT_STORAGE_URL
    with _lock:
        if _limiter is None or source != _limiter_source:
            storage = cast(Storage, storage_from_string(source, key_prefix="daneshyar-rl"))
            _limiter, _limiter_source = SlidingWindowCounterRateLimiter(storage), source
        return _limiter


def limit_for(bucket: str, *, workspace: Workspace | None, organization: Organization | None) -> int:
    """The per-minute limit of ``bucket``: the workspace's, the organization's, or the setting."""
    field, setting = BUCKET_SETTINGS[bucket]
    for owner in (workspace, organization):
        value = getattr(owner, field, None) if owner is not None else None
        if value is not None:
            return int(value)
    return int(getattr(settings, setting))


def consume(request: HttpRequest | Request, bucket: str, limit: int, *identifiers: str) -> None:
    """Count one request in ``bucket`` (429 when it is over ``limit``)."""
    if not settings.RATE_LIMIT_ENABLED:
        return
    item = RateLimitItemPerMinute(max(limit, 1))
    engine = limiter()
    allowed = limit > 0 and engine.hit(item, bucket, *identifiers)
    stats = engine.get_window_stats(item, bucket, *identifiers)
    usage = Usage(
        limit=limit,
        remaining=max(int(stats.remaining), 0),
        reset_seconds=max(math.ceil(stats.reset_time - time.time()), 1),
    )
    raw = getattr(request, "_request", request)
    used: list[Usage] = getattr(raw, REQUEST_ATTRIBUTE, [])
    used.append(usage)
    setattr(raw, REQUEST_ATTRIBUTE, used)
    if not allowed:
        raise RateLimited(
            f"Over the limit of {limit} per minute ({bucket.replace('_', ' ')}). "
            f"Try again in {usage.reset_seconds} s.",
            headers={"Retry-After": str(usage.reset_seconds), **usage.headers()},
        )


def tightest(request: HttpRequest) -> Usage | None:
    used: list[Usage] = getattr(request, REQUEST_ATTRIBUTE, [])
    return min(used, key=lambda u: (u.remaining, u.reset_seconds)) if used else None


class KeyRateThrottle(BaseThrottle):
    """The ``requests`` bucket of every API request (DRF throttle: it runs
    after authentication, before the view)."""

    def allow_request(self, request: Request, view: Any) -> bool:
        principal = request.auth
        if isinstance(principal, ApiKey):
            limit = limit_for("requests", workspace=None, organization=principal.organization)
            consume(request, "requests", limit, str(principal.id))
        elif isinstance(principal, EndUser):
            limit = limit_for("requests", workspace=principal.workspace, organization=principal.organization)
            consume(request, "requests", limit, principal.rate_identity, principal.external_user_id)
        return True


def rate_limit_turn(
    request: Request, *, principal: Principal, workspace: Workspace, end_user: str | None
) -> None:
    """A chat turn: the key's ``chat`` bucket, then its end user's."""
    organization = principal.organization
    identity = rate_identity(principal)
    consume(request, "chat", limit_for("chat", workspace=workspace, organization=organization), identity)
    if end_user:
        limit = limit_for("chat_user", workspace=workspace, organization=organization)
        consume(request, "chat_user", limit, identity, str(workspace.id), end_user)


def rate_limit_upload(request: Request, *, principal: Principal, workspace: Workspace) -> None:
    limit = limit_for("uploads", workspace=workspace, organization=principal.organization)
    consume(request, "uploads", limit, rate_identity(principal))


class RateLimitHeadersMiddleware:
    """``RateLimit-*`` headers on every response that counted against a limit."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        usage = tightest(request)
        if usage is not None:
            for name, value in usage.headers().items():
                response.setdefault(name, value)
        return response
