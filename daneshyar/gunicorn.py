"""gunicorn settings shared by ``make run`` and the container image::

    gunicorn -c python:daneshyar.gunicorn daneshyar.wsgi:application --bind 0.0.0.0:8000

The graceful timeout covers the longest generation a request can wait for,
so a restart (SIGTERM) lets a turn that is still generating finish and be
stored instead of killing it. Read from the environment with the project's
strict readers, without starting Django.
"""

from __future__ import annotations

import os

from daneshyar.env import env_float, env_int

# A turn retries an invalid reply once (chat/services/turn/generate.py MAX_ATTEMPTS).
_ATTEMPTS = 2


def longest_generation_seconds() -> float:
    """The longest a chat request can wait for its generation."""
    local = env_float("LOCAL_TIMEOUT_SECONDS", 60.0, minimum=1.0)
    remote = env_float("OPENAI_TIMEOUT_SECONDS", 60.0, minimum=1.0) * (
        env_int("OPENAI_MAX_RETRIES", 2, minimum=0, maximum=10) + 1
    )
    return _ATTEMPTS * max(local, remote)


worker_class = "gthread"
workers = env_int("WEB_CONCURRENCY", 2, minimum=1)
threads = env_int("WEB_THREADS", 8, minimum=1)
# Seconds a worker may go silent before the arbiter restarts it (gthread
# workers stay responsive while their threads wait on a model).
timeout = 180
graceful_timeout = env_int("GRACEFUL_TIMEOUT_SECONDS", int(longest_generation_seconds()) + 30, minimum=1)


def post_fork(server: object, worker: object) -> None:
    """Before the worker loads the app: its database connections come from a
    pool (DATABASE_POOL_SIZE, unless set), so a turn that lets its
    connection go while the model generates takes one back without
    reconnecting. Two per thread: a streamed turn stores its reply from its
    own thread while its request thread holds the stream, so no thread ever
    waits for a connection another holds (a slow export keeps one for as
    long as its client reads). Only web workers: Celery's forked processes
    keep a connection each (a pool made before a fork is not usable after
    it)."""
    os.environ.setdefault("DATABASE_POOL_SIZE", str(2 * threads))


def post_worker_init(worker: object) -> None:
    """Load the models before the worker takes its first request.

    Each app that has something to load offers ``warm_up()`` on its
    AppConfig (the project package names no app). Without this, the first
    question after a start waits seconds for the embedding model.
    """
    import logging

    from django.apps import apps

    for config in apps.get_app_configs():
        warm_up = getattr(config, "warm_up", None)
        if callable(warm_up):
            try:
                warm_up()
            except Exception:  # readiness (/readyz) reports it; serve anyway
                logging.getLogger("daneshyar").exception("warm-up of %s failed", config.label)
