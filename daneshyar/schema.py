"""OpenAPI helpers: the envelope around a serializer, and the error responses
of every operation.

The error responses are derived, not written per view, so that they stay
true as views change: :class:`AutoSchema` documents each status an operation
can answer from what the operation is (tests/test_schema_fuzz.py holds every
response of a live server to it):

===  ==========================  ============================================
400  ``validation_error``        a request body, query parameters, a
                                 free-text path parameter, or an
                                 ``Idempotency-Key``
401  ``unauthenticated``         every operation with a key
403  ``forbidden``               the view declares it for the method
                                 (``method_error_statuses``), a permission
                                 class says ``refuses_scope``, or
                                 :func:`also_answers`
404  ``not_found``               any path parameter (a foreign or unknown
                                 object is indistinguishable)
409  ``request_in_progress``     an ``idempotent`` handler
413  ``payload_too_large``       a request body
414  (HTML, not the envelope)    query parameters or a free-text path
                                 parameter: a request line over the HTTP
                                 server's limit (gunicorn's 4094 bytes)
415  ``unsupported_media_type``  a request body
422  ``idempotency_key_reused``  an ``idempotent`` handler
429  ``rate_limited``            every operation with a key (``Retry-After``)
502  ``llm_error``               the view declares it (a chat turn)
503  ``llm_unavailable``,        the view declares it (a chat turn, a
     ``embedding_unavailable``   search; ``Retry-After``)
===  ==========================  ============================================

Views are read by duck typing, through the hooks named below (an app's
views declare what they answer): the project package imports no app.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from drf_spectacular import openapi
from drf_spectacular.utils import inline_serializer
from rest_framework import serializers

F = TypeVar("F", bound=Callable[..., Any])

# Set on a handler by workspaces.idempotency.idempotent and by also_answers.
IDEMPOTENT_ATTRIBUTE = "idempotent"
EXTRA_STATUSES_ATTRIBUTE = "extra_error_statuses"
# On a view: ``method_error_statuses(method) -> Iterable[int]``, the error
# statuses an HTTP method answers for reasons its shape does not show (an
# admin-only method: 403; a chat turn: 502 and 503).
METHOD_STATUSES_HOOK = "method_error_statuses"
# On a view: the serializer its error responses follow (default: the envelope).
ERROR_SCHEMA_ATTRIBUTE = "error_schema"

ERROR_DESCRIPTIONS = {
    400: "validation_error: malformed JSON, a missing or invalid field, an unknown id in the body, "
    "an invalid Idempotency-Key.",
    401: "unauthenticated: missing, unknown or revoked key; on the end-user routes, token_expired (an "
    "end-user token past its exp) or token_invalid (malformed, badly signed, revoked by a rotation of "
    "the signing secret, or for another workspace).",
    403: "forbidden: the key's scope does not allow the operation; with an end-user token, an "
    "external_user_id (or user) other than the token's.",
    404: "not_found: no such object visible to this key.",
    409: "request_in_progress: a request with this Idempotency-Key is still running. On uploads naming "
    "an external_id also duplicate_content: another document of the workspace holds these bytes.",
    413: "payload_too_large: the body or the upload is over the limit. On uploads also quota_exceeded: "
    "the upload does not fit in the organization's quota of stored bytes.",
    414: "The request line (path and query string) is over the HTTP server's limit (gunicorn: 4094 "
    "bytes): the server answers in HTML before the API sees the request.",
    415: "unsupported_media_type: the body's or the upload's type is not accepted.",
    422: "idempotency_key_reused: this Idempotency-Key was used with a different request.",
    429: "rate_limited: over a limit; Retry-After says when to try again. On uploads also "
    "quota_exceeded: the organization holds its quota of documents; on creating a web source, the "
    "workspace holds its quota of sources.",
    502: "llm_error: the generation server rejected the request (a configuration problem).",
    503: "llm_unavailable: the generation backend is down or timed out; embedding_unavailable: the "
    "embedding server is down, timed out or serves another model; Retry-After says when to retry.",
}
IDEMPOTENCY_KEY = {
    "in": "header",
    "name": "Idempotency-Key",
    "required": False,
    "schema": {"type": "string", "minLength": 1, "maxLength": 255},
    "description": "Makes a retry safe: the first response to this key is replayed to a retry of the "
    "same request for 24 hours (Idempotent-Replayed: true); see docs/api.md.",
}
RETRY_AFTER = {
    "Retry-After": {
        "schema": {"type": "integer"},
        "required": True,
        "description": "Seconds to wait before trying again.",
    }
}


class ErrorEnvelopeSerializer(serializers.Serializer[Any]):
    status = serializers.ChoiceField(choices=["error"])
    # inline_serializer: a field named "fields" would shadow Serializer.fields.
    error = inline_serializer(
        "Error",
        {
            "code": serializers.CharField(help_text="A stable code: see the status's description."),
            "message": serializers.CharField(help_text="For people; no internals."),
            "fields": serializers.DictField(
                child=serializers.ListField(child=serializers.CharField()),
                required=False,
                help_text="Validation errors only: field name (dotted, list positions in brackets) → "
                "messages.",
            ),
            "session_id": serializers.UUIDField(
                required=False,
                help_text="A chat turn that failed after its session was created: that session.",
            ),
        },
    )

    class Meta:
        ref_name = "ErrorEnvelope"


def envelope(name: str, data: Any) -> Any:
    """``{"status": "ok", "data": …}`` around a serializer (class or instance)."""
    if isinstance(data, type):
        data = data()
    return inline_serializer(
        name=f"{name}Envelope", fields={"status": serializers.ChoiceField(choices=["ok"]), "data": data}
    )


def list_envelope(name: str, item_serializer: Any) -> Any:
    item = item_serializer(many=True) if isinstance(item_serializer, type) else item_serializer
    return envelope(
        name,
        inline_serializer(
            name=f"{name}Page",
            fields={"items": item, "next_cursor": serializers.CharField(allow_null=True)},
        ),
    )


def also_answers(*statuses: int) -> Callable[[F], F]:
    """A handler answers these error statuses too, for reasons its view's
    shape does not show (``include_prompt_trace`` with a chat key: 403)."""

    def mark(handler: F) -> F:
        setattr(handler, EXTRA_STATUSES_ATTRIBUTE, frozenset(statuses))
        return handler

    return mark


class AutoSchema(openapi.AutoSchema):
    """drf-spectacular's schema, plus the error responses each operation can
    answer (the table in this module's docstring)."""

    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation: dict[str, Any] | None = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        error_schema = getattr(self.view, ERROR_SCHEMA_ATTRIBUTE, ErrorEnvelopeSerializer)
        ref = self.resolve_serializer(error_schema, "response").ref
        handler = getattr(self.view, self.method.lower(), None)
        if getattr(handler, IDEMPOTENT_ATTRIBUTE, False):
            operation.setdefault("parameters", []).append(IDEMPOTENCY_KEY)
        responses = operation["responses"]
        for status in sorted(self.error_statuses(operation)):
            response: dict[str, Any] = {
                "description": ERROR_DESCRIPTIONS[status],
                "content": {"application/json": {"schema": ref}},
            }
            if status == 414:
                response["content"] = {"text/html": {"schema": {"type": "string"}}}
            if status in (429, 503):
                response["headers"] = RETRY_AFTER
            responses.setdefault(str(status), response)
        return operation

    def error_statuses(self, operation: dict[str, Any]) -> set[int]:
        method = self.method.upper()
        handler = getattr(self.view, self.method.lower(), None)
        parameters = operation.get("parameters", [])
        statuses: set[int] = set(getattr(handler, EXTRA_STATUSES_ATTRIBUTE, ()))
        if operation.get("security"):
            statuses |= {401, 429}
        if "requestBody" in operation:
            statuses |= {400, 413, 415}
        if any(p["in"] == "query" for p in parameters) or any(
            p["in"] == "path" and p.get("schema", {}).get("format") != "uuid" for p in parameters
        ):
            statuses |= {400, 414}
        if any(p["in"] == "path" for p in parameters):
            statuses.add(404)
        declared = getattr(self.view, METHOD_STATUSES_HOOK, None)
        if declared is not None:
            statuses |= set(declared(method))
        if any(getattr(permission, "refuses_scope", False) for permission in self.view.get_permissions()):
            statuses.add(403)
        if getattr(handler, IDEMPOTENT_ATTRIBUTE, False):
            statuses |= {400, 409, 422}
        return statuses
