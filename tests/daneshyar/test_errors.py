"""The one error shape (daneshyar/exceptions.py): every kind of failure,
whoever raises it, leaves as ``{"status": "error", "error": {...}}`` with a
stable code, and the OpenAI-compatible endpoint's in OpenAI's shape."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from django.test import RequestFactory
from rest_framework import exceptions as drf

from chat.openai_api.errors import OPENAI_ERROR_TYPES, openai_error_body
from daneshyar.exceptions import (
    ApplicationError,
    Forbidden,
    IdempotencyKeyReused,
    LLMError,
    LLMUnavailable,
    NotFound,
    PayloadTooLarge,
    RequestInProgress,
    UnsupportedMediaType,
    ValidationFailed,
    error_body,
    error_response,
    exception_handler,
    handler400,
    handler403,
    handler404,
    handler500,
)
from tests.conftest import Tenant, api_client

OPENAI_BASE = "/api/v1/workspaces/{}/openai/v1/"


def handled(exc: Exception) -> tuple[int, dict[str, Any], dict[str, str]]:
    response = exception_handler(exc, {})
    assert response.data is not None
    return response.status_code, response.data, dict(response.headers)


@pytest.mark.parametrize(
    ("exc", "status", "code"),
    [
        (ValidationFailed("bad"), 400, "validation_error"),
        (NotFound(), 404, "not_found"),
        (Forbidden(), 403, "forbidden"),
        (PayloadTooLarge(), 413, "payload_too_large"),
        (UnsupportedMediaType("no"), 415, "unsupported_media_type"),
        (RequestInProgress(), 409, "request_in_progress"),
        (IdempotencyKeyReused(), 422, "idempotency_key_reused"),
        (LLMUnavailable(), 503, "llm_unavailable"),
        (LLMError(), 502, "llm_error"),
        (drf.ParseError("JSON parse error"), 400, "validation_error"),
        (drf.NotAuthenticated(), 401, "unauthenticated"),
        (drf.AuthenticationFailed("Invalid API key."), 401, "unauthenticated"),
        (drf.PermissionDenied(), 403, "forbidden"),
        (DjangoPermissionDenied(), 403, "forbidden"),
        (drf.NotFound(), 404, "not_found"),
        (Http404("internal detail"), 404, "not_found"),
        (drf.MethodNotAllowed("PUT"), 405, "method_not_allowed"),
        (drf.NotAcceptable(), 406, "not_acceptable"),
        (drf.UnsupportedMediaType("text/plain"), 415, "unsupported_media_type"),
        (RequestDataTooBig(), 413, "payload_too_large"),
        (TooManyFieldsSent(), 400, "validation_error"),
        (drf.Throttled(), 429, "rate_limited"),
        (drf.APIException("Service busy"), 500, "error"),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, Exception) else str(value),
)
def test_every_failure_maps_to_its_status_and_code(exc: Exception, status: int, code: str) -> None:
    got_status, body, _ = handled(exc)
    assert got_status == status
    assert body["status"] == "error"
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]


def test_an_unhandled_error_is_500_without_its_message(caplog: pytest.LogCaptureFixture) -> None:
    status, body, _ = handled(KeyError("database password is hunter2"))
    assert status == 500
    assert body == {
        "status": "error",
        "error": {"code": "internal_error", "message": "An internal error occurred."},
    }
    # Logged for the operator, with the traceback.
    assert any(record.exc_info for record in caplog.records)


def test_a_404_never_repeats_what_raised_it() -> None:
    _, body, _ = handled(Http404("No Workspace matches the given query."))
    assert body["error"] == {"code": "not_found", "message": "Not found."}


def test_a_permission_error_without_detail_gets_the_scope_message() -> None:
    _, body, _ = handled(DjangoPermissionDenied())
    assert body["error"]["message"] == Forbidden.default_message
    _, body, _ = handled(drf.PermissionDenied("Only for admin keys."))
    assert body["error"]["message"] == "Only for admin keys."


def test_a_parse_error_says_the_body_is_malformed() -> None:
    _, body, _ = handled(drf.ParseError("JSON parse error - Expecting value"))
    assert body["error"]["message"] == "Malformed request body: JSON parse error - Expecting value"
    assert "fields" not in body["error"]


def test_application_error_default_message_fields_details_and_headers() -> None:
    exc = ValidationFailed(
        fields={"name": ["Required."]},
        details={"session_id": "abc"},
        headers={"X-Extra": "1"},
    )
    status, body, headers = handled(exc)
    assert status == 400
    assert body == {
        "status": "error",
        "error": {
            "code": "validation_error",
            "message": ApplicationError.default_message,
            "fields": {"name": ["Required."]},
            "session_id": "abc",
        },
    }
    assert headers["X-Extra"] == "1"


@pytest.mark.parametrize(
    ("exc", "retry_after"),
    [
        (LLMUnavailable(), "5"),
        (LLMUnavailable(retry_after=30), "30"),
        (LLMUnavailable(headers={"Retry-After": "12"}), "12"),
    ],
)
def test_llm_unavailable_always_says_when_to_retry(exc: LLMUnavailable, retry_after: str) -> None:
    _, _, headers = handled(exc)
    assert headers["Retry-After"] == retry_after


@pytest.mark.parametrize(("wait", "retry_after"), [(0.2, "2"), (59.9, "61"), (3, "4")])
def test_a_throttled_request_says_to_wait_past_its_window(wait: float, retry_after: str) -> None:
    # DRF rounds the wait up to whole seconds; one more keeps a client that
    # retries on the dot from landing just before the window frees up.
    status, _, headers = handled(drf.Throttled(wait=wait))
    assert status == 429
    assert headers["Retry-After"] == retry_after
    assert int(headers["Retry-After"]) > wait


def test_a_throttled_request_without_a_wait_has_no_retry_after() -> None:
    _, _, headers = handled(drf.Throttled())
    assert "Retry-After" not in headers


@pytest.mark.parametrize("exc", [drf.NotAuthenticated(), drf.AuthenticationFailed()])
def test_401_names_the_api_key_header(exc: Exception) -> None:
    _, _, headers = handled(exc)
    assert headers["WWW-Authenticate"] == "X-API-Key"


@pytest.mark.parametrize(
    ("detail", "fields"),
    [
        ({"name": ["This field is required."]}, {"name": ["This field is required."]}),
        (["Top-level problem."], {"non_field_errors": ["Top-level problem."]}),
        ("A single message.", {"non_field_errors": ["A single message."]}),
        (
            {"settings": {"top_k": ["Too big."], "history": {"turns": ["Negative."]}}},
            {"settings.top_k": ["Too big."], "settings.history.turns": ["Negative."]},
        ),
        (
            {"rules": [{}, {"pattern": ["Invalid regex."]}]},
            {"rules[1].pattern": ["Invalid regex."]},
        ),
        ({"resource_ids": {0: ["Must be a valid UUID."]}}, {"resource_ids[0]": ["Must be a valid UUID."]}),
        ({"messages": [[], ["Bad role."]]}, {"messages[1]": ["Bad role."]}),
        ([{"a": ["x"]}, {"b": ["y"]}], {"[0].a": ["x"], "[1].b": ["y"]}),
    ],
)
def test_validation_errors_flatten_to_dotted_paths(detail: Any, fields: dict[str, list[str]]) -> None:
    status, body, _ = handled(drf.ValidationError(detail))
    assert status == 400
    assert body["error"]["message"] == "The request has invalid fields."
    assert body["error"]["fields"] == fields


def test_django_validation_errors_keep_their_fields() -> None:
    _, body, _ = handled(DjangoValidationError({"top_k": ["Ensure this value is at most 50."]}))
    assert body["error"]["fields"] == {"top_k": ["Ensure this value is at most 50."]}
    _, body, _ = handled(DjangoValidationError(["One.", "Two."]))
    assert body["error"]["fields"] == {"non_field_errors": ["One.", "Two."]}


def test_error_body_leaves_out_empty_fields_and_details() -> None:
    assert error_body("not_found", "Not found.", {}, {}) == {
        "status": "error",
        "error": {"code": "not_found", "message": "Not found."},
    }


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        *OPENAI_ERROR_TYPES.items(),
        (418, "invalid_request_error"),
        (500, "api_error"),
        (504, "api_error"),
    ],
)
def test_openai_error_types_follow_the_status(status: int, kind: str) -> None:
    body = openai_error_body(status, "code", "Message.")
    assert body == {"error": {"message": "Message.", "type": kind, "code": "code", "param": None}}


def test_openai_errors_spell_out_field_problems_and_name_the_first() -> None:
    body = openai_error_body(
        400,
        "validation_error",
        "Invalid.",
        {"model": ["Unknown model."], "messages": ["Empty.", "Too long."]},
    )
    assert body["error"]["param"] == "model"
    assert body["error"]["message"] == "Invalid. model: Unknown model.; messages: Empty. Too long."


@pytest.mark.parametrize(
    ("path", "openai"),
    [
        ("/api/v1/workspaces/abc/openai/v1/chat/completions", True),
        ("/api/v1/workspaces/abc/openai/", True),
        ("/api/v1/workspaces/abc/openai", False),
        ("/api/v1/workspaces/abc/chat/", False),
        ("/openai/v1/chat/completions", False),
        ("", False),
    ],
)
def test_error_response_picks_the_shape_from_the_path(path: str, openai: bool) -> None:
    response = error_response(404, "not_found", "Not found.", path=path)
    body = json.loads(response.content)
    assert response.status_code == 404
    if openai:
        assert body["error"]["type"] == "not_found_error"
    else:
        assert body == {"status": "error", "error": {"code": "not_found", "message": "Not found."}}


@pytest.mark.parametrize(
    ("call", "status", "code"),
    [
        (lambda r: handler400(r), 400, "validation_error"),
        (lambda r: handler400(r, RequestDataTooBig()), 413, "payload_too_large"),
        (lambda r: handler403(r, DjangoPermissionDenied()), 403, "forbidden"),
        (lambda r: handler404(r, Http404()), 404, "not_found"),
        (lambda r: handler500(r), 500, "internal_error"),
    ],
    ids=["400", "400-too-big", "403", "404", "500"],
)
def test_django_level_handlers_answer_the_envelope(call: Any, status: int, code: str) -> None:
    request = RequestFactory().get("/somewhere/")
    response = call(request)
    assert response.status_code == status
    assert json.loads(response.content)["error"]["code"] == code
    openai = call(RequestFactory().get(OPENAI_BASE.format(uuid.uuid4()) + "models"))
    assert json.loads(openai.content)["error"]["code"] == code
    assert "type" in json.loads(openai.content)["error"]


# Through the HTTP stack: DRF's own refusals leave in the envelope too.


@pytest.mark.django_db
def test_an_unsupported_method_is_405_in_the_envelope(owner: Tenant) -> None:
    response = owner.client().put("/api/v1/workspaces/", {"name": "x"}, format="json")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert "PUT" in response.json()["error"]["message"]


@pytest.mark.django_db
def test_a_form_body_is_415_not_read_as_a_form(owner: Tenant) -> None:
    response = owner.client().post(
        "/api/v1/workspaces/", "name=Claims", content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"


@pytest.mark.django_db
def test_asking_for_xml_is_406_in_json(owner: Tenant) -> None:
    response = owner.client().get("/api/v1/workspaces/", HTTP_ACCEPT="application/xml")
    assert response.status_code == 406
    assert response.json()["error"]["code"] == "not_acceptable"


@pytest.mark.django_db
def test_no_key_is_401_with_the_header_to_send(db: None) -> None:
    response = api_client(None).get("/api/v1/workspaces/")
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "X-API-Key"
    assert response.json()["error"]["code"] == "unauthenticated"
