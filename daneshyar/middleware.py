from __future__ import annotations

import contextlib
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from daneshyar.exceptions import error_response

# Room for multipart boundaries and small form fields (title) around the file.
_MULTIPART_OVERHEAD = 64 * 1024

# Routes with a limit of their own, by the end of their path: an app
# registers them from its AppConfig.ready (the bulk upload: resources/apps.py);
# their views check the exact limit.
BODY_LIMITS: list[tuple[str, Callable[[], int]]] = []


def register_body_limit(path_suffix: str, limit: Callable[[], int]) -> None:
    """A route whose path ends in ``path_suffix`` accepts a body of any type
    up to ``limit()`` bytes (read per request: settings may change in tests)."""
    BODY_LIMITS.append((path_suffix, limit))


def largest_body_bytes() -> int:
    """The largest body any route takes (an upload or a bulk upload, with
    its multipart overhead): what the buffering fronts let through."""
    return max(settings.MAX_UPLOAD_BYTES, settings.BATCH_UPLOAD_MAX_BYTES) + _MULTIPART_OVERHEAD


class BodyDrainMiddleware:
    """Read the rest of a body the response was given without (a 413 from
    its Content-Length, a 429 at the door, a 401), up to
    :func:`largest_body_bytes`, before the response goes out.

    gunicorn closes the connection after such a response; a socket closed
    with unread bytes in it is reset, not closed, and the reset can take
    the answer with it before the sender reads it — the buffering front
    (``make run``'s proxy, nginx) then drops the client's connection or
    answers 502 instead of the 413 or 429. Behind a front the body has
    already arrived whole, so reading it costs no wait. A declared body
    over the bound is left unread: no front passes one.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return response
        if 0 < length <= largest_body_bytes():
            # A body shorter than declared, or a client gone: nothing to read off.
            with contextlib.suppress(Exception):
                while request.read(_DRAIN_CHUNK):
                    pass
        return response


_DRAIN_CHUNK = 64 * 1024


class BodySizeLimitMiddleware:
    """Refuse an over-limit body from its Content-Length before reading it.

    Uploads (multipart) may be up to MAX_UPLOAD_BYTES; a route registered
    with :func:`register_body_limit` (any body type) up to its own limit;
    every other body up to MAX_JSON_BODY_BYTES. Bodies without a Content-Length are still bounded by
    DATA_UPLOAD_MAX_MEMORY_SIZE and by the upload view's own size check.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return error_response(
                400, "validation_error", "Invalid Content-Length header.", path=request.path
            )
        if length:
            content_type = request.META.get("CONTENT_TYPE", "")
            multipart = content_type.startswith("multipart/form-data")
            overhead = _MULTIPART_OVERHEAD if multipart else 0
            own = next((bound for suffix, bound in BODY_LIMITS if request.path.endswith(suffix)), None)
            if own is not None:
                limit = own() + overhead
            elif multipart:
                limit = settings.MAX_UPLOAD_BYTES + overhead
            else:
                limit = settings.MAX_JSON_BODY_BYTES
            if length > limit:
                return error_response(
                    413,
                    "payload_too_large",
                    f"The request body is {length} bytes; the limit is {limit} bytes.",
                    path=request.path,
                )
        return self.get_response(request)


class NulRefusalMiddleware:
    """A NUL character (``%00``) in the path or the query string is a 400.

    PostgreSQL text cannot hold NUL, so a value carrying one (an end user id
    in the path, a filter in the query) reached the database as an error: a
    500. No route has a use for it; refusing it here covers every route.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        query = request.GET
        if "\x00" in request.path or any(
            "\x00" in name or any("\x00" in value for value in values) for name, values in query.lists()
        ):
            return error_response(
                400,
                "validation_error",
                "The path or the query string contains a NUL character (%00).",
                path=request.path,
            )
        return self.get_response(request)
