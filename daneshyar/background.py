"""Work a request starts and collects later, on a small per-process pool of threads.

A chat turn overlaps what waits on different things: a follow-up's query
rewrite (a call to the generation server) runs while its other queries are
embedded and searched, and the next query's embedding (the model, on the CPU)
while the previous one is searched (PostgreSQL). Nothing submitted here may
touch the database: Django's connections are per thread.

The pool is made on first use in each process (a pool made before gunicorn
forks would have no threads in the children) and each job runs in a copy of
the submitting thread's context (``Server-Timing`` phases, log context).
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from daneshyar.env import env_int

P = ParamSpec("P")
T = TypeVar("T")

# A turn has at most two jobs running at once (a rewrite, which may wait
# seconds on the generation server, and an embedding): two per web thread
# (daneshyar/gunicorn.py), so an embedding never queues behind rewrites.
WORKERS = max(16, 2 * env_int("WEB_THREADS", 8, minimum=1))

_pool: ThreadPoolExecutor | None = None
_pool_pid = 0
_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool, _pool_pid
    pid = os.getpid()
    if _pool is None or _pool_pid != pid:
        with _lock:
            if _pool is None or _pool_pid != pid:
                _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="background")
                _pool_pid = pid
    return _pool


def submit(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
    """Run ``fn(*args, **kwargs)`` on the pool, in a copy of the current context."""
    context = contextvars.copy_context()

    def job() -> T:
        return context.run(fn, *args, **kwargs)

    return _executor().submit(job)
