"""The gunicorn configuration the image and ``make run`` share."""

from __future__ import annotations

from daneshyar import gunicorn
from retrieval import embeddings


def test_worker_start_loads_the_embedding_model_before_the_first_request() -> None:
    embeddings._embedders.clear()

    gunicorn.post_worker_init(object())

    assert embeddings._configured() in embeddings._embedders


def test_graceful_timeout_covers_the_longest_generation() -> None:
    assert gunicorn.graceful_timeout >= gunicorn.longest_generation_seconds()
