from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from daneshyar.exceptions import error_response

# Room for multipart boundaries and small form fields (title) around the file.
_MULTIPART_OVERHEAD = 64 * 1024
# The bulk upload route (resources/urls.py); its view checks the exact limit.
BATCH_UPLOAD_PATH_SUFFIX = "/resources/batch/"


class BodySizeLimitMiddleware:
    """Refuse an over-limit body from its Content-Length before reading it.

    Uploads (multipart) may be up to MAX_UPLOAD_BYTES; the bulk upload
    (``…/resources/batch/``, any body type) up to BATCH_UPLOAD_MAX_BYTES;
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
            if request.path.endswith(BATCH_UPLOAD_PATH_SUFFIX):
                limit = settings.BATCH_UPLOAD_MAX_BYTES + overhead
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
