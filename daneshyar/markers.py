"""Named markers with a lease, shared by every process of a deployment: "a
sweep is queued or running", "a delayed wake of the ingestion is on its way".

A marker is claimed with a value (the id of the task that holds it) for
``seconds``; while it stands, a second claim gets the holder's value back
instead; it goes when its holder releases it (only its own value can) or
when its lease runs out — so a holder that died never blocks anything for
longer than its lease.

Kept in Redis when ``REDIS_URL`` is set (one ``SET NX EX``; the release a
compare-and-delete script), else in files under ``DATA_DIR/markers`` (the
embedded run: one machine). Names are prefixed with ``CELERY_QUEUE_PREFIX``
(daneshyar/config/background.py), as the queues are, so that a test run and
a service on the same Redis never see each other's markers.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import time
from pathlib import Path

import redis
from django.conf import settings

_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('del', KEYS[1])
end
return 0
"""


def _key(name: str) -> str:
    return f"daneshyar:marker:{settings.CELERY_QUEUE_PREFIX}{name}"


@functools.cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)


def marker_claim(name: str, value: str, *, seconds: float) -> str | None:
    """Claim ``name`` for ``seconds``: None when claimed, else the value of
    the one holding it."""
    lease = max(1, int(seconds))
    if settings.REDIS_URL:
        client = _client(settings.REDIS_URL)
        if client.set(_key(name), value, nx=True, ex=lease):
            return None
        held = client.get(_key(name))
        # Gone between the two calls (its lease ran out): claim again once.
        if held is None:
            return None if client.set(_key(name), value, nx=True, ex=lease) else ""
        return str(held.decode() if isinstance(held, bytes) else held)
    return _file_claim(_path(name), value, lease)


def marker_release(name: str, value: str) -> None:
    """Release ``name`` if ``value`` still holds it (a later holder's stays)."""
    if settings.REDIS_URL:
        _client(settings.REDIS_URL).eval(_RELEASE, 1, _key(name), value)
        return
    path = _path(name)
    held = _file_read(path)
    if held is not None and held[0] == value:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _path(name: str) -> Path:
    folder = Path(settings.DATA_DIR) / "markers"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / hashlib.sha256(_key(name).encode()).hexdigest()


def _file_read(path: Path) -> tuple[str, float] | None:
    try:
        value, _, expires = path.read_text().partition("\n")
        return value, float(expires)
    except (FileNotFoundError, ValueError):
        return None


def _file_claim(path: Path, value: str, lease: int) -> str | None:
    for _ in range(2):
        try:
            descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            held = _file_read(path)
            if held is not None and held[1] > time.time():
                return held[0]
            with contextlib.suppress(FileNotFoundError):
                path.unlink()  # its lease ran out: claim it afresh
            continue
        with os.fdopen(descriptor, "w") as file:
            file.write(f"{value}\n{time.time() + lease}")
        return None
    return ""
