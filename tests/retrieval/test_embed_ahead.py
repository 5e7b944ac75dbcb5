"""Embedding ahead: a turn starts its next query's embedding on a background
thread (daneshyar.background) and a later lookup waits for that work instead
of repeating it; a failure there reaches the caller and is not kept. The
pool carries the caller's context and survives a fork (gunicorn's workers)."""

from __future__ import annotations

import contextvars
import os
import threading
import time
import uuid
from concurrent.futures import Future
from typing import Any

import numpy as np
import pytest

from daneshyar import background
from retrieval import embeddings
from retrieval.embeddings import embed_ahead, embed_cached, get_embedder

pytestmark = pytest.mark.slow


def _counted(
    monkeypatch: pytest.MonkeyPatch, fail_first: bool = False, hold: threading.Event | None = None
) -> list[list[str]]:
    """Records each call of the real model (the first one fails when asked,
    once ``hold`` is set where one is given)."""
    embedder = get_embedder()
    real = embedder.embed_queries
    calls: list[list[str]] = []

    def counted(texts: list[str], **kwargs: Any) -> Any:
        calls.append(list(texts))
        if fail_first and len(calls) == 1:
            if hold is not None:
                assert hold.wait(timeout=10)
            raise RuntimeError("the model failed")
        return real(texts, **kwargs)

    monkeypatch.setattr(embedder, "embed_queries", counted)
    return calls


def _waited(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Set once a caller waits on work embedded ahead: lets the work ahead
    fail only while someone waits for it, whatever the threads' timing."""
    waited = threading.Event()

    class Waited(Future):  # type: ignore[type-arg]
        def result(self, timeout: float | None = None) -> Any:
            waited.set()
            return super().result(timeout)

    monkeypatch.setattr(embeddings, "Future", Waited)
    return waited


def test_a_text_embedded_ahead_is_embedded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    text = f"How long do refunds take? {uuid.uuid4()}"
    expected = np.asarray(get_embedder().embed_queries([text])[0], dtype=np.float32)
    calls = _counted(monkeypatch)
    embed_ahead([text], side="query")
    embed_ahead([text], side="query")  # already under way: not started twice
    [vector] = embed_cached([text], side="query")
    assert calls == [[text]]
    assert np.allclose(vector, expected, atol=1e-6)
    [again] = embed_cached([text], side="query")
    assert calls == [[text]] and np.array_equal(again, vector)


def test_a_failure_ahead_reaches_the_caller_and_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    text = f"Where do parcels ship from? {uuid.uuid4()}"
    calls = _counted(monkeypatch, fail_first=True, hold=_waited(monkeypatch))
    embed_ahead([text], side="query")
    with pytest.raises(RuntimeError, match="the model failed"):
        embed_cached([text], side="query")
    [vector] = embed_cached([text], side="query")
    assert len(calls) == 2 and vector.shape == (get_embedder().dimensions,)


def test_a_caller_after_a_failure_ahead_embeds_the_text_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    text = f"Which carriers deliver on Sundays? {uuid.uuid4()}"
    calls = _counted(monkeypatch, fail_first=True)
    embed_ahead([text], side="query")
    deadline = time.monotonic() + 10
    while any(key[2] == text for key in embeddings._ahead) and time.monotonic() < deadline:
        time.sleep(0.01)  # until the work ahead has failed and let go of the text
    [vector] = embed_cached([text], side="query")
    assert len(calls) == 2 and vector.shape == (get_embedder().dimensions,)


request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="")


def test_background_jobs_run_in_the_callers_context_on_another_thread() -> None:
    request_id.set("turn-1")
    job = background.submit(lambda: (request_id.get(), threading.get_ident()))
    seen, ident = job.result(timeout=5)
    assert seen == "turn-1" and ident != threading.get_ident()


def test_the_pool_works_in_a_forked_child() -> None:
    """A pool made before gunicorn forks has no threads in the children."""
    assert background.submit(os.getpid).result(timeout=5) == os.getpid()
    child = os.fork()
    if child == 0:  # the child: exit 0 only if its job ran
        ok = False
        try:
            ok = background.submit(os.getpid).result(timeout=5) == os.getpid()
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
