"""Liveness and readiness, without an API key.

The project checks what it owns (the database, the broker); each app
registers the readiness of its own dependencies from its ``AppConfig.ready``
(retrieval: the embedding model; chat: the generation backend), so this
module imports no app.
"""

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


CHECKS: dict[str, Callable[[], None]] = {
    "database": _check_database,
    "broker": _check_broker,
}


def register_check(name: str, check: Callable[[], None]) -> None:
    """Add a readiness check: ``check`` raises when its dependency cannot serve.

    Called from an app's ``ready()``; checks run in registration order.
    """
    CHECKS[name] = check


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
