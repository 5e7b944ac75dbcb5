"""The gunicorn configuration the image and ``make run`` share."""

from __future__ import annotations

import os

import pytest

from daneshyar import gunicorn
from retrieval import embeddings


def test_worker_start_loads_the_embedding_model_before_the_first_request() -> None:
    embeddings._embedders.clear()

    gunicorn.post_worker_init(object())

    assert embeddings._configured() in embeddings._embedders


def test_graceful_timeout_covers_the_longest_generation() -> None:
    assert gunicorn.graceful_timeout >= gunicorn.longest_generation_seconds()


def test_a_web_worker_takes_its_connections_from_a_pool_of_two_per_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DATABASE_POOL_SIZE", raising=False)
    gunicorn.post_fork(object(), object())
    assert os.environ["DATABASE_POOL_SIZE"] == str(2 * gunicorn.threads)
    # An operator's own setting stands (0: no pool).
    monkeypatch.setenv("DATABASE_POOL_SIZE", "0")
    gunicorn.post_fork(object(), object())
    assert os.environ["DATABASE_POOL_SIZE"] == "0"
