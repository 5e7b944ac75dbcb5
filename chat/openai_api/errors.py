"""OpenAI's error shape, for every error under the OpenAI-compatible base
URL: also those raised before any view runs (an unknown route under it, an
over-limit body), which is why chat registers it with the project package
(``daneshyar.exceptions.register_error_shape``, in chat/apps.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Every path under the base URL an OpenAI client is given (chat/openai_api/urls.py).
OPENAI_PATH = r"^/api/v1/workspaces/[^/]+/openai/"

# OpenAI's error ``type`` for each status the API answers with.
OPENAI_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    409: "conflict_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
    502: "api_error",
    503: "service_unavailable_error",
}


def openai_error_body(
    status: int, code: str, message: str, fields: Mapping[str, list[str]] | None = None
) -> dict[str, Any]:
    """``{"error": {"message", "type", "code", "param"}}``; field errors are
    spelt out in the message (clients show it) and the first names ``param``."""
    param = None
    if fields:
        param = next(iter(fields))
        details = "; ".join(f"{name}: {' '.join(problems)}" for name, problems in fields.items())
        message = f"{message} {details}"
    return {
        "error": {
            "message": message,
            "type": OPENAI_ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error"),
            "code": code,
            "param": param,
        }
    }
