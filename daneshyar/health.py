"""Liveness and readiness, without an API key."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

logger = logging.getLogger(__name__)


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok", "data": {"alive": True}})


def _check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        if cursor.fetchone() is None:
            raise RuntimeError("the vector extension is not installed (run migrate)")


def _check_broker() -> None:
    from daneshyar.celery import app

    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)


def _check_embedding() -> None:
    from retrieval.embeddings import embedding_readiness

    embedding_readiness()


def _check_generation() -> None:
    from chat.backends import generation_readiness

    generation_readiness()


CHECKS: dict[str, Callable[[], None]] = {
    "database": _check_database,
    "broker": _check_broker,
    "embedding_model": _check_embedding,
    "generation_backend": _check_generation,
}


@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    results: dict[str, str] = {}
    for name, check in CHECKS.items():
        try:
            check()
            results[name] = "ok"
        except Exception as exc:
            logger.warning("readiness check %s failed: %s", name, exc)
            results[name] = f"error: {type(exc).__name__}"
    ready = all(value == "ok" for value in results.values())
    if ready:
        return JsonResponse({"status": "ok", "data": {"ready": True, "checks": results}})
    return JsonResponse(
        {
            "status": "error",
            "error": {
                "code": "not_ready",
                "message": "Some dependencies are unavailable.",
                "checks": results,
            },
        },
        status=503,
    )
