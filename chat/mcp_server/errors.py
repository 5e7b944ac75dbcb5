"""Errors in the protocol's shapes, both carrying the REST envelope's error
(``code``, ``message``, ``fields`` for a validation error, ``retry_after``
for a rate limit) and its HTTP status: a JSON-RPC error object (its
``data``) for a refused request, a tool's error result (its
``structuredContent``) for a tool's own failure (server.py). The
one exception handler (daneshyar/exceptions.py) classifies every error, so
the codes and messages are the REST routes' own; an error raised before the
view runs (an over-limit body) takes this shape too (registered in
chat/apps.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from daneshyar.exceptions import NotFound, exception_handler

# The MCP tool routes' path: errors under it are JSON-RPC errors.
MCP_PATH = r"^/api/v1/workspaces/[^/]+/mcp/"

# JSON-RPC error code for each HTTP status (-32602: invalid params, as the
# protocol spells a bad tool argument or an unknown tool; the others in the
# range JSON-RPC leaves to servers, -32000 - the status's last two digits).
JSONRPC_CODES = {
    400: -32602,
    401: -32001,
    403: -32003,
    404: -32004,
    405: -32005,
    409: -32009,
    413: -32013,
    415: -32015,
    422: -32022,
    429: -32029,
    500: -32603,
    502: -32052,
    503: -32053,
}


class UnknownTool(NotFound):
    """A tool this server does not have: ``not_found`` as the REST routes
    answer an unknown path, with the code the protocol gives it (-32602)."""

    default_message = "Unknown tool."


def jsonrpc_code(status: int) -> int:
    return JSONRPC_CODES.get(status, -32603)


def error_data(
    status: int, code: str, message: str, fields: Mapping[str, list[str]] | None = None
) -> dict[str, Any]:
    data: dict[str, Any] = {"code": code, "message": message, "status": status}
    if fields:
        data["fields"] = dict(fields)
    return data


def mcp_error_body(
    status: int, code: str, message: str, fields: Mapping[str, list[str]] | None = None
) -> dict[str, Any]:
    """A JSON-RPC error response for a request refused before any message
    was read (its ``id`` unknown: null, as JSON-RPC says)."""
    return {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": jsonrpc_code(status),
            "message": message,
            "data": error_data(status, code, message, fields),
        },
    }


# The envelope's code for each status the transport refuses a request with itself.
TRANSPORT_CODES = {
    400: "validation_error",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


def transport_error_body(status: int, text: bytes) -> dict[str, Any]:
    """A refusal of the SDK's transport that is not already a JSON-RPC error."""
    message = text.decode("utf-8", errors="replace").strip()[:500] or "The request was refused."
    return mcp_error_body(status, TRANSPORT_CODES.get(status, "internal_error"), message)


# The envelope's code and HTTP status of the protocol's own errors, which the
# SDK words without one: a message that is not JSON-RPC (-32700, -32600),
# bad parameters (-32602), a method this server does not have (-32601, as
# the REST routes answer an unknown path), its own failure (-32603).
PROTOCOL_CODES = {
    -32700: ("validation_error", 400),
    -32600: ("validation_error", 400),
    -32602: ("validation_error", 400),
    -32601: ("not_found", 404),
    -32603: ("internal_error", 500),
}


def with_envelope(body: bytes, status: int) -> bytes | None:
    """``body`` again, when it is a JSON-RPC error of the SDK's own that
    carries no envelope error in its ``data``, with one (the SDK's message,
    cut at 500 characters; the HTTP status, or the error's own); None for
    anything else (a result, or an error that already carries one)."""
    if b'"error"' not in body[:200]:
        return None
    try:
        answer = json.loads(body)
    except ValueError:
        return None
    error = answer.get("error") if isinstance(answer, dict) else None
    if not isinstance(error, dict) or (isinstance(error.get("data"), dict) and "code" in error["data"]):
        return None
    code, own_status = PROTOCOL_CODES.get(error.get("code"), ("validation_error", 400))  # type: ignore[arg-type]
    message = str(error.get("message") or "The request was refused.")[:500]
    if error.get("code") == -32601 and isinstance(error.get("data"), str):
        message = f"{message}: {error['data'][:100]}"  # the SDK's data is the method's name
    error["message"] = message
    error["data"] = error_data(status if status >= 400 else own_status, code, message)
    return json.dumps(answer, ensure_ascii=False).encode("utf-8")


def envelope_of(exc: Exception) -> tuple[int, dict[str, Any], dict[str, str]]:
    """The HTTP status, the envelope's error object and the headers the REST
    routes would answer ``exc`` with (a 500 logged, its details withheld)."""
    response = exception_handler(exc, {})
    error: dict[str, Any] = dict(response.data["error"])  # type: ignore[index]
    return response.status_code, error, {name: value for name, value in response.items()}


def tool_error(exc: Exception) -> dict[str, Any]:
    """The REST envelope's error for ``exc``, with its HTTP ``status`` and,
    for a rate limit, ``retry_after`` (seconds)."""
    status, error, headers = envelope_of(exc)
    data = {**error, "status": status}
    if "Retry-After" in headers:
        data["retry_after"] = int(headers["Retry-After"])
    return data


def tool_error_text(error: Mapping[str, Any]) -> str:
    """A tool execution error as the model reads it: the message, each
    refused argument's messages, the wait of a rate limit, the code."""
    lines = [f"{error['message']} ({error['code']})"]
    for name, messages in (error.get("fields") or {}).items():
        lines.append(f"{name}: {' '.join(str(m) for m in messages)}")
    if "retry_after" in error:
        lines.append(f"Retry after {error['retry_after']} seconds.")
    return "\n".join(lines)


def mcp_error(exc: Exception) -> MCPError:
    """``exc`` as the protocol's error, carrying the REST envelope's error."""
    data = tool_error(exc)
    code = INVALID_PARAMS if isinstance(exc, UnknownTool) else jsonrpc_code(data["status"])
    return MCPError(code=code, message=str(data["message"]), data=data)
