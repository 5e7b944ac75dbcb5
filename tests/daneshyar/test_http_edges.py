"""What the project package does around every request: the body-size guard,
Server-Timing, liveness and readiness, and the database router."""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import DEFAULT_DB_ALIAS
from django.http import HttpRequest, HttpResponse
from django.test import Client, RequestFactory
from pytest_django.fixtures import Settings

from daneshyar import health, timing
from daneshyar.celery import app as celery_app
from daneshyar.routers import SEARCH_ALIAS, PrimaryRouter
from tests.conftest import Tenant, api_client
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db

JSON_LIMIT = 2048
UPLOAD_LIMIT = 4096
BATCH_LIMIT = 8192
OVERHEAD = 64 * 1024  # room the guard leaves for multipart boundaries


@pytest.fixture
def small_limits(settings: Settings) -> Settings:
    settings.MAX_JSON_BODY_BYTES = JSON_LIMIT
    settings.MAX_UPLOAD_BYTES = UPLOAD_LIMIT
    settings.BATCH_UPLOAD_MAX_BYTES = BATCH_LIMIT
    return settings


def _claimed(path: str, content_type: str, length: int) -> Any:
    """A POST whose Content-Length claims ``length`` bytes (the guard decides
    from the header alone, before reading a byte of the body)."""
    return Client().post(path, data=b"{}", content_type=content_type, CONTENT_LENGTH=str(length))


NOWHERE = "/api/v1/nowhere/"  # a path no view answers: past the guard, a 404
BATCH = "/api/v1/workspaces/{}/resources/batch/".replace("{}", str(uuid.UUID(int=1)))
MULTIPART = "multipart/form-data; boundary=xyz"


@pytest.mark.parametrize(
    ("path", "content_type", "length", "limit"),
    [
        (NOWHERE, "application/json", JSON_LIMIT, None),
        (NOWHERE, "application/json", JSON_LIMIT + 1, JSON_LIMIT),
        (NOWHERE, "text/plain", JSON_LIMIT + 1, JSON_LIMIT),
        # An upload may be larger than a JSON body, plus its boundaries.
        (NOWHERE, MULTIPART, UPLOAD_LIMIT + OVERHEAD, None),
        (NOWHERE, MULTIPART, UPLOAD_LIMIT + OVERHEAD + 1, UPLOAD_LIMIT + OVERHEAD),
        # The bulk upload has its own limit, whatever the body's type.
        (BATCH, "application/zip", BATCH_LIMIT, None),
        (BATCH, "application/zip", BATCH_LIMIT + 1, BATCH_LIMIT),
        (BATCH, MULTIPART, BATCH_LIMIT + OVERHEAD + 1, BATCH_LIMIT + OVERHEAD),
    ],
)
def test_the_body_size_guard_answers_413_from_the_content_length(
    small_limits: Settings, path: str, content_type: str, length: int, limit: int | None
) -> None:
    response = _claimed(path, content_type, length)
    if limit is None:
        assert response.status_code != 413
        return
    assert response.status_code == 413
    assert json.loads(response.content) == {
        "status": "error",
        "error": {
            "code": "payload_too_large",
            "message": f"The request body is {length} bytes; the limit is {limit} bytes.",
        },
    }


@pytest.mark.parametrize("length", ["abc", "-", "1.5"])
def test_a_malformed_content_length_is_a_400(length: str) -> None:
    response = Client().post(NOWHERE, data=b"{}", content_type="application/json", CONTENT_LENGTH=length)
    assert response.status_code == 400
    assert json.loads(response.content)["error"] == {
        "code": "validation_error",
        "message": "Invalid Content-Length header.",
    }


def test_an_over_limit_body_is_refused_before_any_view_runs(owner: Tenant, small_limits: Settings) -> None:
    body = json.dumps({"name": "x" * JSON_LIMIT})
    response = owner.client().post("/api/v1/workspaces/", data=body, content_type="application/json")
    assert response.status_code == 413
    assert not Workspace.objects.filter(name__startswith="xxx").exists()


def test_the_openai_endpoint_refuses_an_over_limit_body_in_its_own_shape(small_limits: Settings) -> None:
    path = f"/api/v1/workspaces/{uuid.uuid4()}/openai/v1/chat/completions"
    response = _claimed(path, "application/json", JSON_LIMIT + 1)
    assert response.status_code == 413
    error = json.loads(response.content)["error"]
    assert error["type"] == "invalid_request_error" and error["code"] == "payload_too_large"


# Server-Timing


def test_a_phase_outside_a_request_measures_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """No current request: nothing is timed (the clock is not even read)
    and nothing is raised."""

    class NoClock:
        @staticmethod
        def perf_counter() -> float:
            raise AssertionError("a phase outside a request read the clock")

    monkeypatch.setattr(timing, "time", NoClock)
    with timing.phase("embed"):
        pass


def _middleware(view: object) -> timing.ServerTimingMiddleware:
    return timing.ServerTimingMiddleware(view)  # type: ignore[arg-type]


def test_phases_of_one_name_add_up_and_app_covers_them(settings: Settings) -> None:
    settings.SERVER_TIMING = True

    def view(request: HttpRequest) -> HttpResponse:
        for _ in range(2):
            with timing.phase("search"):
                time.sleep(0.01)
        with timing.phase("embed"):
            time.sleep(0.005)
        return HttpResponse("ok")

    response = _middleware(view)(RequestFactory().get("/"))
    phases = {name: float(ms) for name, ms in re.findall(r"(\w+);dur=([0-9.]+)", response["Server-Timing"])}
    assert list(phases) == ["search", "embed", "app"]
    assert phases["search"] >= 20.0
    assert phases["embed"] >= 5.0
    assert phases["app"] >= phases["search"] + phases["embed"]
    assert re.fullmatch(r"(\w+;dur=\d+\.\d{2})(, \w+;dur=\d+\.\d{2})*", response["Server-Timing"])


def test_a_failing_view_leaves_no_phases_behind(settings: Settings) -> None:
    settings.SERVER_TIMING = True

    def view(request: HttpRequest) -> HttpResponse:
        with timing.phase("search"):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        _middleware(view)(RequestFactory().get("/"))
    # The request's phases were dropped: later code outside a request is not timed.
    with timing.phase("search"):
        pass


def test_server_timing_off_adds_no_header(settings: Settings) -> None:
    settings.SERVER_TIMING = False

    def view(request: HttpRequest) -> HttpResponse:
        with timing.phase("embed"):
            pass
        return HttpResponse("ok")

    assert "Server-Timing" not in _middleware(view)(RequestFactory().get("/"))


# Liveness and readiness


def test_liveness_answers_get_only() -> None:
    client = api_client(None)
    assert client.get("/healthz").status_code == 200
    assert client.post("/healthz").status_code == 405
    assert client.post("/readyz").status_code == 405


@pytest.fixture
def checks() -> Iterator[None]:
    """The registry of readiness checks, restored afterwards."""
    saved = dict(health.CHECKS)
    yield
    health.CHECKS.clear()
    health.CHECKS.update(saved)


def test_a_failing_dependency_makes_readiness_503_naming_it_without_details(checks: None) -> None:
    def search_index() -> None:
        raise ConnectionError("10.0.0.7:5432 refused, password=secret")

    health.register_check("search_index", search_index)
    response = api_client(None).get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "error"
    assert body["error"]["code"] == "not_ready"
    assert body["error"]["checks"]["search_index"] == "error: ConnectionError"
    assert body["error"]["checks"]["database"] == "ok"
    assert "secret" not in response.content.decode()


def test_registered_checks_run_in_order_and_a_passing_one_reports_ok(checks: None) -> None:
    ran: list[str] = []
    health.register_check("first", lambda: ran.append("first"))
    health.register_check("second", lambda: ran.append("second"))
    response = api_client(None).get("/readyz")
    assert response.status_code == 200
    assert ran == ["first", "second"]
    names = list(response.json()["data"]["checks"])
    assert names.index("database") < names.index("first") < names.index("second")


def test_an_unreachable_broker_makes_readiness_503(monkeypatch: pytest.MonkeyPatch) -> None:
    # A port nothing listens on: the real connection attempt fails quickly.
    monkeypatch.setattr(celery_app.conf, "broker_url", "redis://127.0.0.1:9/0")
    started = time.monotonic()
    response = api_client(None).get("/readyz")
    assert response.status_code == 503
    checks = response.json()["error"]["checks"]
    assert checks["broker"].startswith("error: ")
    assert checks["database"] == "ok"
    assert time.monotonic() - started < 15


# The database router


@pytest.mark.parametrize("hints", [{}, {"instance": object()}])
def test_reads_and_writes_stay_on_the_primary(hints: dict[str, object]) -> None:
    router = PrimaryRouter()
    assert router.db_for_read(Workspace, **hints) == DEFAULT_DB_ALIAS
    assert router.db_for_write(Workspace, **hints) == DEFAULT_DB_ALIAS
    assert router.allow_relation(object(), object()) is True


@pytest.mark.parametrize(
    ("alias", "allowed"), [(DEFAULT_DB_ALIAS, True), (SEARCH_ALIAS, False), ("other", True)]
)
def test_the_replica_is_never_migrated(alias: str, allowed: bool) -> None:
    assert PrimaryRouter().allow_migrate(alias, "retrieval", "passage") is allowed
