"""``POST /api/v1/workspaces/{workspace_id}/mcp/``: the workspace as an MCP
server (docs/mcp.md). The view authenticates and resolves the workspace as
every end-user route does (``EndUserApi``: an admin or chat key, or an
end-user token of this workspace; its ``requests`` rate limit), then hands
the body to the SDK's transport with a server bound to that caller. A
refusal of the request (no key, a web page's Origin the workspace does not
allow, a rate limit) is a JSON-RPC error carrying the REST envelope's
``code``; a tool's own failure is the tool's error result (server.py)."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from django.http import HttpResponse, JsonResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from chat.mcp_server.calls import Caller
from chat.mcp_server.errors import mcp_error_body, transport_error_body, with_envelope
from chat.mcp_server.server import mcp_server
from chat.mcp_server.transport import serve
from daneshyar.exceptions import Forbidden
from daneshyar.schema import IDEMPOTENT_ATTRIBUTE
from workspaces.access import EndUserApi
from workspaces.cors import cors_allowed
from workspaces.idempotency import idempotency_begin, idempotency_finish, idempotency_release


class McpErrorSchema(serializers.Serializer[Any]):
    """A JSON-RPC error response (the schema of this endpoint's error responses)."""

    jsonrpc = serializers.CharField(help_text='"2.0"')
    id = serializers.JSONField(allow_null=True, help_text="The request's id; null when it could not be read.")
    error = inline_serializer(
        "McpErrorDetail",
        {
            "code": serializers.IntegerField(
                help_text="JSON-RPC: -32602 a bad argument or an unknown tool, ..."
            ),
            "message": serializers.CharField(),
            "data": serializers.JSONField(
                required=False,
                help_text="The REST envelope's error: code (validation_error, ...), message, status, fields.",
            ),
        },
    )

    class Meta:
        ref_name = "McpError"


ORIGIN_REFUSED = (
    "Requests from this Origin are not allowed: a web page may call the MCP server only from one of the "
    "workspace's allowed_origins, with an end-user token."
)

# Headers of the SDK's answer that the view passes on (Django sets the length).
PASSED_HEADERS = frozenset({"content-type", "mcp-session-id", "mcp-protocol-version", "allow"})


def _result(response: HttpResponse) -> Any:
    """The JSON-RPC answer of a successful response, or None (an error, a
    tool's error result, an accepted notification)."""
    if not 200 <= response.status_code < 300 or not response.content:
        return None
    try:
        answer = json.loads(response.content)
    except ValueError:
        return None
    if not isinstance(answer, dict) or "result" not in answer:
        return None
    result = answer["result"]
    return answer if not (isinstance(result, dict) and result.get("isError")) else None


class McpApi(EndUserApi):
    # Read by daneshyar.schema.AutoSchema for the documented error responses.
    error_schema = McpErrorSchema
    # The answer tool's end user is an argument, checked against a token's
    # own when the tool runs (a tool error), not a field of this route's body.
    names_end_user = False

    def method_error_statuses(self, method: str) -> frozenset[int]:
        # 403: a web page's Origin that the workspace does not allow.
        return super().method_error_statuses(method) | {403}

    @extend_schema(
        operation_id="mcp",
        summary="MCP server (Streamable HTTP)",
        description=(
            "The workspace as a Model Context Protocol server, over the protocol's Streamable HTTP "
            "transport (stateless; JSON responses): JSON-RPC messages in, JSON-RPC messages out. Tools "
            "`search`, `answer`, `list_documents`, `read_passage` (docs/mcp.md). Authenticated as the "
            "REST routes: `X-API-Key`, or `Authorization: Bearer` with an API key or an end-user token, "
            "whose groups and resources apply. A tool's own failure (a refused argument, a passage not "
            "found, a rate limit) is a result with `isError` whose `structuredContent.error` is the REST "
            "envelope's error (`code`, `message`, `fields`); a refused request is a JSON-RPC error whose "
            "`data` is that error. A web page's `Origin` must be one of the workspace's `allowed_origins` "
            "(403). With an `Idempotency-Key`, a successful "
            "reply is replayed to a retry with the same key and body, as on the REST routes."
        ),
        tags=["MCP"],
        request=OpenApiTypes.OBJECT,
        responses={
            (200, "application/json"): OpenApiResponse(
                OpenApiTypes.OBJECT, description="A JSON-RPC response (a result, or an error)."
            ),
            (202, "application/json"): OpenApiResponse(
                description="A notification or a response from the client, accepted."
            ),
            (406, "application/json"): OpenApiResponse(
                McpErrorSchema,
                description="The request's Accept header lacks application/json (and, for the "
                "handshake-era protocol, text/event-stream), as the transport requires.",
            ),
        },
    )
    def post(self, request: Request, workspace_id: Any) -> HttpResponse:
        if request.headers.get("origin") and not cors_allowed(None, request._request):
            # The transport's rule against DNS rebinding: a request from a web
            # page only from an origin the workspace allows (workspaces/cors.py).
            raise Forbidden(ORIGIN_REFUSED)
        body = request.body  # read first: an Idempotency-Key's fingerprint parses it again
        claim, replayed = idempotency_begin(request, self.principal, self.workspace)
        if replayed is not None:
            return replayed
        request.idempotency = claim  # type: ignore[attr-defined]  # the answer tool's (calls.py)
        try:
            response = self._served(request, body)
        except Exception:
            idempotency_release(claim)
            raise
        # A result is replayed to a retry with the same key; an error is not
        # (a turn that failed after storing its question stays resumable).
        if claim.record is not None:
            result = _result(response)
            if result is not None:
                idempotency_finish(claim, status=response.status_code, body=result)
            else:
                idempotency_finish(claim, status=max(response.status_code, 400), body=None)
        return response

    # Documented as every idempotent route's (daneshyar/schema.py).
    setattr(post, IDEMPOTENT_ATTRIBUTE, True)

    def _served(self, request: Request, body: bytes) -> HttpResponse:
        caller = Caller(principal=self.principal, workspace=self.workspace, request=request)
        reply = serve(partial(mcp_server, caller), request._request, body)
        headers = {name.lower(): value for name, value in reply.headers}
        if reply.status >= 400 and not headers.get("content-type", "").startswith("application/json"):
            # A refusal the transport words in plain text (a wrong Content-Type or
            # Accept): the same error, in the protocol's shape as every other.
            return JsonResponse(transport_error_body(reply.status, reply.body), status=reply.status)
        # The SDK's own errors (a malformed message, a method it does not
        # have) carry the envelope's code too, as every other.
        body = with_envelope(reply.body, reply.status) or reply.body
        response = HttpResponse(body, status=reply.status)
        for name, value in headers.items():
            if name in PASSED_HEADERS:
                response[name] = value
        return response

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        """JSON whatever the Accept header: a client opening the protocol's
        event stream (``GET``, ``Accept: text/event-stream``) is told 405, as
        the transport says a server without one answers (clients then go on
        without it), not 406; a POST's Accept header is the transport's to
        check."""
        return super().perform_content_negotiation(request, force=True)

    def handle_exception(self, exc: Exception) -> Response:
        """A refusal before the SDK runs (no key, an unknown workspace, a
        rate limit) as a JSON-RPC error, status and headers kept."""
        response = super().handle_exception(exc)
        error = response.data.get("error") if isinstance(response.data, dict) else None
        if isinstance(error, dict):
            response.data = mcp_error_body(
                response.status_code, str(error.get("code")), str(error.get("message")), error.get("fields")
            )
        return response
