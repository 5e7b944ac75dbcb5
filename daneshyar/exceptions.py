"""The one error shape of the API and the handler that produces it.

Every failure, whether raised by a service (:class:`ApplicationError`), by DRF
(validation, parsing, authentication) or by Django itself (unknown route, body
too large, an unhandled bug), leaves as::

    {"status": "error", "error": {"code": ..., "message": ..., "fields"?: {...}}}
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, JsonResponse
from rest_framework import exceptions as drf
from rest_framework.response import Response

logger = logging.getLogger(__name__)


class ApplicationError(Exception):
    """An expected failure with a contract error code. Services raise these.

    ``details`` are extra members of the error object (``session_id`` on a
    chat error after the session was created); ``headers`` go on the
    response (``Retry-After``).
    """

    status_code = 400
    code = "validation_error"
    default_message = "The request could not be processed."

    def __init__(
        self,
        message: str | None = None,
        *,
        fields: dict[str, list[str]] | None = None,
        details: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ):
        self.message = message or self.default_message
        self.fields = fields
        self.details: dict[str, str] = dict(details or {})
        self.headers: dict[str, str] = dict(headers or {})
        super().__init__(self.message)


class ValidationFailed(ApplicationError):
    status_code = 400
    code = "validation_error"


class NotFound(ApplicationError):
    status_code = 404
    code = "not_found"
    default_message = "Not found."


class Forbidden(ApplicationError):
    status_code = 403
    code = "forbidden"
    default_message = "This API key's scope does not allow this operation."


class TokenInvalid(drf.AuthenticationFailed):
    """An end-user token that is malformed, badly signed, revoked (its
    signing secret was rotated), or for another workspace: 401 ``token_invalid``."""

    default_detail = "Invalid end-user token."


class TokenExpired(drf.AuthenticationFailed):
    """An end-user token past its ``exp``: 401 ``token_expired`` (mint a new one)."""

    default_detail = "The end-user token has expired."


class PayloadTooLarge(ApplicationError):
    status_code = 413
    code = "payload_too_large"
    default_message = "The request body is over the size limit."


class UnsupportedMediaType(ApplicationError):
    status_code = 415
    code = "unsupported_media_type"


class RequestInProgress(ApplicationError):
    status_code = 409
    code = "request_in_progress"
    default_message = "A request with this Idempotency-Key is still running; retry when it has finished."


class IdempotencyKeyReused(ApplicationError):
    status_code = 422
    code = "idempotency_key_reused"
    default_message = "This Idempotency-Key was used with a different request."


class ServiceUnavailable(ApplicationError):
    """A server the request needs is down, busy or timed out: a 503 worth
    retrying later (``Retry-After``: ``retry_after``, or the class's default)."""

    status_code = 503
    retry_after_seconds = 5

    def __init__(self, message: str | None = None, *, retry_after: int | None = None, **kwargs: Any):
        super().__init__(message, **kwargs)
        self.headers.setdefault("Retry-After", str(retry_after or self.retry_after_seconds))


class LLMUnavailable(ServiceUnavailable):
    """The generation backend is down, busy, rate-limited or timed out."""

    code = "llm_unavailable"
    default_message = "The generation backend is unavailable or timed out. Try again."


class EmbeddingUnavailable(ServiceUnavailable):
    """The embedding server (``EMBEDDING_BACKEND=remote``) is down, busy,
    timed out, or answers with what this deployment cannot use: a search or
    a turn cannot embed its question. An ingestion meeting it is retried,
    then fails with its message."""

    code = "embedding_unavailable"
    default_message = "The embedding server is unavailable or timed out. Try again."

    def __init__(self, message: str | None = None, *, server_down: bool = False, **kwargs: Any):
        super().__init__(message, **kwargs)
        # Unreachable or failing after every try (not a refusal of this
        # request): the next request would wait out the same tries.
        self.server_down = server_down


class LLMError(ApplicationError):
    """The generation server rejected the request (400/401/403/404): a
    configuration problem, not worth retrying."""

    status_code = 502
    code = "llm_error"
    default_message = "The generation server rejected the request; the deployment needs attention."


def error_body(
    code: str,
    message: str,
    fields: dict[str, Any] | None = None,
    details: dict[str, str] | None = None,
) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if fields:
        error["fields"] = fields
    if details:
        error.update(details)
    return {"status": "error", "error": error}


# ``body(status, code, message, fields)``: an error object in some wire format.
ErrorBody = Callable[[int, str, str, Mapping[str, list[str]] | None], dict[str, Any]]

# Error shapes other than the envelope, by path. An app whose routes answer
# errors in another wire format registers it (from its AppConfig.ready), so
# that errors raised before any view runs take it too: a path under its base
# URL that names no route, an over-limit body (daneshyar/middleware.py).
ERROR_SHAPES: list[tuple[re.Pattern[str], ErrorBody]] = []


def register_error_shape(path: str, body: ErrorBody) -> None:
    """Requests whose path matches the regular expression ``path`` (from the
    start) get their errors from ``body`` when no view of theirs handles them."""
    ERROR_SHAPES.append((re.compile(path), body))


def error_response(
    status: int, code: str, message: str, fields: dict[str, Any] | None = None, *, path: str = ""
) -> JsonResponse:
    """The error for a request that no DRF view handles; ``path`` picks the
    shape an app registered for it (:func:`register_error_shape`), else the
    envelope."""
    for pattern, body in ERROR_SHAPES:
        if pattern.match(path):
            return JsonResponse(body(status, code, message, fields), status=status)
    return JsonResponse(error_body(code, message, fields), status=status)


def flatten_fields(detail: Any) -> dict[str, list[str]]:
    """DRF's nested ``detail`` → ``{"field": ["message", ...]}``: dotted paths,
    list positions in brackets (``rules[0].pattern``), as everywhere in the API."""
    out: dict[str, list[str]] = {}

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                if isinstance(key, int):  # ListField errors are keyed by position
                    walk(inner, f"{path}[{key}]")
                else:
                    walk(inner, f"{path}.{key}" if path else str(key))
        elif isinstance(value, list) and value and all(not isinstance(v, dict | list) for v in value):
            out.setdefault(path or "non_field_errors", []).extend(str(v) for v in value)
        elif isinstance(value, list):
            for index, inner in enumerate(value):
                if inner:
                    walk(inner, f"{path}[{index}]" if path else f"[{index}]")
        else:
            out.setdefault(path or "non_field_errors", []).append(str(value))

    walk(detail, "")
    return out


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF's ``EXCEPTION_HANDLER``: map everything to the envelope."""
    status, code, message, fields = _classify(exc)
    headers: dict[str, str] = {}
    details: dict[str, str] | None = None
    if isinstance(exc, ApplicationError):
        headers.update(exc.headers)
        details = exc.details
    wait = getattr(exc, "wait", None)
    if isinstance(exc, drf.Throttled) and wait is not None:
        headers["Retry-After"] = str(int(wait) + 1)
    if isinstance(exc, TokenInvalid | TokenExpired):
        headers["WWW-Authenticate"] = 'Bearer realm="api", error="invalid_token"'
    elif isinstance(exc, drf.NotAuthenticated | drf.AuthenticationFailed):
        headers["WWW-Authenticate"] = "X-API-Key"
    if isinstance(exc, drf.NotAuthenticated) and _sent_end_user_token(context):
        message = END_USER_ROUTES_ONLY
    return Response(error_body(code, message, fields, details), status=status, headers=headers)


END_USER_ROUTES_ONLY = (
    "End-user tokens are accepted only on the end-user routes (chat, stream, OpenAI completions and "
    "models, the user's sessions and messages, feedback, GET /models/); this operation needs an API key."
)


def _sent_end_user_token(context: dict[str, Any]) -> bool:
    """Whether the refused request carried a bearer credential that is not an API key."""
    request = context.get("request")
    header = str(getattr(request, "META", {}).get("HTTP_AUTHORIZATION", ""))
    scheme, _, credentials = header.partition(" ")
    credentials = credentials.strip()
    return scheme.lower() == "bearer" and bool(credentials) and not credentials.startswith("dk_")


# DRF exceptions whose detail is the message shown: their status and code.
_DETAIL_IS_MESSAGE: tuple[tuple[type[drf.APIException], int, str], ...] = (
    (TokenInvalid, 401, "token_invalid"),
    (TokenExpired, 401, "token_expired"),
    (drf.NotAuthenticated, 401, "unauthenticated"),
    (drf.AuthenticationFailed, 401, "unauthenticated"),
    (drf.MethodNotAllowed, 405, "method_not_allowed"),
    (drf.NotAcceptable, 406, "not_acceptable"),
    (drf.UnsupportedMediaType, 415, "unsupported_media_type"),
)


def _classify(exc: Exception) -> tuple[int, str, str, dict[str, list[str]] | None]:
    if isinstance(exc, ApplicationError):
        return exc.status_code, exc.code, exc.message, exc.fields
    invalid = _classify_invalid(exc)
    if invalid is not None:
        return invalid
    for kind, status, code in _DETAIL_IS_MESSAGE:
        if isinstance(exc, kind):
            return status, code, str(exc.detail), None
    if isinstance(exc, drf.PermissionDenied | DjangoPermissionDenied):
        message = str(getattr(exc, "detail", "")) or Forbidden.default_message
        return 403, "forbidden", message, None
    if isinstance(exc, drf.NotFound | Http404):
        return 404, "not_found", "Not found.", None
    if isinstance(exc, RequestDataTooBig):
        return 413, "payload_too_large", PayloadTooLarge.default_message, None
    if isinstance(exc, drf.Throttled):
        return 429, "rate_limited", "Too many requests.", None
    if isinstance(exc, drf.APIException):
        return exc.status_code, "error", str(exc.detail), None
    logger.exception("Unhandled error in API view", exc_info=exc)
    return 500, "internal_error", "An internal error occurred.", None


def _classify_invalid(exc: Exception) -> tuple[int, str, str, dict[str, list[str]] | None] | None:
    """A 400 for a request whose body or fields are invalid; None for any other error."""
    if isinstance(exc, drf.ValidationError):
        return 400, "validation_error", "The request has invalid fields.", flatten_fields(exc.detail)
    if isinstance(exc, DjangoValidationError):
        fields = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        return 400, "validation_error", "The request has invalid fields.", fields
    if isinstance(exc, drf.ParseError):
        return 400, "validation_error", f"Malformed request body: {exc.detail}", None
    if isinstance(exc, TooManyFieldsSent):
        return 400, "validation_error", "Too many form fields.", None
    return None


# Django-level handlers (routes that never reach a DRF view).
def handler400(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    if isinstance(exception, RequestDataTooBig):
        return error_response(413, "payload_too_large", PayloadTooLarge.default_message, path=request.path)
    return error_response(400, "validation_error", "Bad request.", path=request.path)


def handler403(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return error_response(403, "forbidden", Forbidden.default_message, path=request.path)


def handler404(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return error_response(404, "not_found", "Not found.", path=request.path)


def handler500(request: HttpRequest) -> JsonResponse:
    return error_response(500, "internal_error", "An internal error occurred.", path=request.path)
