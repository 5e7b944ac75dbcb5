"""``Server-Timing``: where a request's time went, measured in the server.

With ``SERVER_TIMING=true`` every response carries a ``Server-Timing``
header (https://www.w3.org/TR/server-timing/) with the phases that code
marked with :func:`phase` during the request — ``auth`` (key or token,
workspace, rate limits), and for a chat turn ``plan`` (model, guard),
``store`` (the question, the history), ``rewrite`` (a follow-up made
standalone by the generative model), ``embed`` (query embedding) and
``search`` (the database part) of retrieval, ``decide`` (answerability),
``compose`` (the prompt), ``generate`` and ``reply`` (storing it) — and
``app``, the whole time spent below this middleware. Browsers' developer tools show it;
``bench/chat_overhead.py`` reads it to split a chat turn. Off by default:
timings are nobody's business but the operator's.

A streamed response's phases run after its headers are sent, so only the
phases before the first byte appear there.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

_phases: ContextVar[dict[str, float] | None] = ContextVar("server_timing_phases", default=None)


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Add the time spent in the block to the current request's ``name`` phase."""
    phases = _phases.get()
    if phases is None:
        yield
        return
    started = time.perf_counter()
    try:
        yield
    finally:
        phases[name] = phases.get(name, 0.0) + time.perf_counter() - started


class ServerTimingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if not settings.SERVER_TIMING:
            return self.get_response(request)
        phases: dict[str, float] = {}
        token = _phases.set(phases)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
        finally:
            _phases.reset(token)
        phases["app"] = time.perf_counter() - started
        response["Server-Timing"] = ", ".join(f"{name};dur={s * 1000:.2f}" for name, s in phases.items())
        return response
