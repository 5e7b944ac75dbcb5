"""Concurrent requests per API key: a semaphore with leases.

The rate limits (workspaces/ratelimit.py) count requests per minute; they do
not stop one key from holding every web thread at once with slow turns,
streams or exports (issue 23: "nothing caps concurrent requests per key").
Each API request of a key takes a slot before its view runs
(:class:`ConcurrencyThrottle`, after authentication and the rate limits) and
gives it back when its response is done (:class:`ConcurrencyMiddleware`): a
plain response once the view has returned it, a stream when it ends or its
client goes away (the WSGI server closes the response). Over
``MAX_CONCURRENT_REQUESTS_PER_KEY``: 429 ``rate_limited`` with
``Retry-After``.

The slots live in Redis (a sorted set per key: token -> lease end, changed by
Lua scripts on Redis's clock), shared by every web process; without
REDIS_URL, in the process. A slot whose process died is taken back when its
lease (``CONCURRENCY_LEASE_SECONDS``) runs out; a stream renews its lease
while it runs.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, cast

import redis
from django.conf import settings
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from daneshyar.exceptions import ApplicationError
from workspaces.models import ApiKey
from workspaces.principals import EndUser

# Where a request keeps its slot, for the middleware.
REQUEST_ATTRIBUTE = "_daneshyar_concurrency_slot"
_PREFIX = "daneshyar-cc:"

_ACQUIRE = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[1], now_ms + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + 1000)
return 1
"""
_RENEW = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', now_ms + tonumber(ARGV[1]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) + 1000)
return 1
"""


class TooManyConcurrentRequests(ApplicationError):
    status_code = 429
    code = "rate_limited"
    default_message = "Too many requests in progress for this API key. Try again when one has finished."


class RedisSlots:
    def __init__(self, url: str):
        self.client = redis.Redis.from_url(url)
        self.acquire_script = self.client.register_script(_ACQUIRE)
        self.renew_script = self.client.register_script(_RENEW)

    def acquire(self, name: str, token: str, *, limit: int, lease: float) -> bool:
        args: list[int | str] = [limit, int(lease * 1000), token]
        return bool(self.acquire_script(keys=[_PREFIX + name], args=args))

    def renew(self, name: str, token: str, *, lease: float) -> None:
        self.renew_script(keys=[_PREFIX + name], args=[int(lease * 1000), token])

    def release(self, name: str, token: str) -> None:
        self.client.zrem(_PREFIX + name, token)

    def held(self, name: str) -> int:
        self.client.zremrangebyscore(_PREFIX + name, "-inf", int(time.time() * 1000))
        return int(cast(int, self.client.zcard(_PREFIX + name)))


class MemorySlots:
    """The same, per process (no REDIS_URL: ``make run`` without Redis)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.slots: dict[str, dict[str, float]] = {}

    def _live(self, name: str) -> dict[str, float]:
        now = time.monotonic()
        slots = {token: end for token, end in self.slots.get(name, {}).items() if end > now}
        self.slots[name] = slots
        return slots

    def acquire(self, name: str, token: str, *, limit: int, lease: float) -> bool:
        with self.lock:
            slots = self._live(name)
            if len(slots) >= limit:
                return False
            slots[token] = time.monotonic() + lease
            return True

    def renew(self, name: str, token: str, *, lease: float) -> None:
        with self.lock:
            if token in self.slots.get(name, {}):
                self.slots[name][token] = time.monotonic() + lease

    def release(self, name: str, token: str) -> None:
        with self.lock:
            self.slots.get(name, {}).pop(token, None)
            if not self.slots.get(name):
                self.slots.pop(name, None)

    def held(self, name: str) -> int:
        with self.lock:
            return len(self._live(name))


_backend: RedisSlots | MemorySlots | None = None
_backend_source: str | None = None
_lock = threading.Lock()


def slots() -> RedisSlots | MemorySlots:
    """The process's slots: in Redis (REDIS_URL), else in memory."""
    global _backend, _backend_source
    source = settings.REDIS_URL or ""
    with _lock:
        if _backend is None or source != _backend_source:
            _backend = RedisSlots(source) if source else MemorySlots()
            _backend_source = source
        return _backend


class Slot:
    """One request's slot: released once, renewed at most every quarter lease."""

    def __init__(self, name: str, lease: float):
        self.name, self.lease = name, lease
        self.token = uuid.uuid4().hex
        self.renewed = time.monotonic()
        self.released = False

    def renew_if_due(self) -> None:
        if not self.released and time.monotonic() - self.renewed > self.lease / 4:
            self.renewed = time.monotonic()
            slots().renew(self.name, self.token, lease=self.lease)

    def release(self) -> None:
        if not self.released:
            self.released = True
            slots().release(self.name, self.token)


def acquire(request: HttpRequest | Request, name: str, limit: int) -> None:
    """Take a slot of ``name`` for this request (429 when all ``limit`` are held)."""
    slot = Slot(name, float(settings.CONCURRENCY_LEASE_SECONDS))
    if not slots().acquire(name, slot.token, limit=limit, lease=slot.lease):
        raise TooManyConcurrentRequests(
            f"This API key already has {limit} requests in progress, the most it may have at once. "
            "Try again when one has finished.",
            headers={"Retry-After": "1"},
        )
    setattr(getattr(request, "_request", request), REQUEST_ATTRIBUTE, slot)


class ConcurrencyThrottle(BaseThrottle):
    """A slot per request of an API key, or of one end user with an
    end-user token (DRF throttle: it runs after authentication and the
    per-minute limits, before the view)."""

    def allow_request(self, request: Request, view: Any) -> bool:
        limit = int(settings.MAX_CONCURRENT_REQUESTS_PER_KEY)
        principal = request.auth
        if limit > 0 and isinstance(principal, ApiKey):
            acquire(request, f"key:{principal.id}", limit)
        elif limit > 0 and isinstance(principal, EndUser):
            acquire(request, f"end-user:{principal.workspace.id}:{principal.external_user_id}", limit)
        return True


class _HeldWhileStreaming:
    """A stream's content that renews its slot as it goes and gives it back
    when the response is closed (at its end, or when the client went away)."""

    def __init__(self, content: Iterator[Any], slot: Slot):
        self.content, self.slot = content, slot

    def __iter__(self) -> _HeldWhileStreaming:
        return self

    def __next__(self) -> Any:
        self.slot.renew_if_due()
        return next(self.content)

    def close(self) -> None:
        self.slot.release()


class ConcurrencyMiddleware:
    """Gives a request's slot back when its response is done."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            response = self.get_response(request)
        except BaseException:
            _release(request)
            raise
        slot: Slot | None = getattr(request, REQUEST_ATTRIBUTE, None)
        if slot is not None and isinstance(response, StreamingHttpResponse) and not response.is_async:
            response.streaming_content = _HeldWhileStreaming(iter(response.streaming_content), slot)
        else:
            _release(request)
        return response


def _release(request: HttpRequest) -> None:
    slot: Slot | None = getattr(request, REQUEST_ATTRIBUTE, None)
    if slot is not None:
        slot.release()
