"""The project package's shared helpers: keyset pagination over real rows,
timestamps, string-only UUIDs, ``DATABASE_URL`` and the gunicorn settings."""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from typing import Any

import pytest
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from daneshyar import gunicorn
from daneshyar.api import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    UUIDField,
    keyset_after,
    ok,
    paginate,
    query_data,
    timestamp,
    uuid_of,
    uuid_or_404,
)
from daneshyar.database import database_from_url
from daneshyar.exceptions import NotFound, ValidationFailed
from tests.conftest import Tenant
from workspaces.models import Workspace


def _request(**params: Any) -> Request:
    return Request(APIRequestFactory().get("/", params))


def _page(ordering: tuple[str, ...], **params: Any) -> dict[str, Any]:
    response = paginate(
        _request(**params),
        Workspace.objects.all(),
        ordering=ordering,
        serialize=lambda rows: [row.name for row in rows],
    )
    assert response.status_code == 200 and response.data is not None
    assert response.data["status"] == "ok"
    data: dict[str, Any] = response.data["data"]
    return data


def _walk(ordering: tuple[str, ...], limit: int) -> list[str]:
    seen: list[str] = []
    cursor: str | None = None
    while True:
        data = _page(ordering, limit=limit, **({"cursor": cursor} if cursor else {}))
        assert len(data["items"]) <= limit
        seen += data["items"]
        cursor = data["next_cursor"]
        if cursor is None:
            return seen


@pytest.fixture
def named_workspaces(owner: Tenant) -> list[str]:
    """Seven workspaces whose names repeat: the first sort key has ties."""
    owner.workspace.name = "b"
    owner.workspace.save()
    for name in ["a", "c", "b", "a", "c", "b"]:
        Workspace.objects.create(organization=owner.organization, name=name)
    return sorted(Workspace.objects.values_list("name", flat=True))


@pytest.mark.django_db
@pytest.mark.parametrize("limit", [1, 2, 3, 7, 100])
@pytest.mark.parametrize(
    ("ordering", "descending"),
    [
        (("name", "id"), False),
        (("-name", "id"), True),
        (("-name", "-id"), True),
        (("created_at", "id"), None),
    ],
)
def test_pages_walk_every_row_once_in_order_across_ties(
    named_workspaces: list[str], limit: int, ordering: tuple[str, ...], descending: bool | None
) -> None:
    seen = _walk(ordering, limit)
    assert sorted(seen) == named_workspaces
    if descending is not None:
        assert seen == sorted(named_workspaces, reverse=descending)
    expected = list(Workspace.objects.order_by(*ordering).values_list("name", flat=True))
    assert seen == expected


@pytest.mark.django_db
def test_the_last_page_has_no_cursor_even_when_full(owner: Tenant) -> None:
    Workspace.objects.create(organization=owner.organization, name="Another")
    first = _page(("created_at", "id"), limit=1)
    assert first["next_cursor"] is not None
    second = _page(("created_at", "id"), limit=1, cursor=first["next_cursor"])
    assert len(second["items"]) == 1 and second["next_cursor"] is None
    assert _page(("created_at", "id"), limit=2)["next_cursor"] is None


@pytest.mark.django_db
def test_the_default_and_largest_page_sizes(owner: Tenant) -> None:
    for _ in range(DEFAULT_LIMIT + 1):
        Workspace.objects.create(organization=owner.organization, name="Another")
    assert len(_page(("created_at", "id"))["items"]) == DEFAULT_LIMIT
    assert len(_page(("created_at", "id"), limit=MAX_LIMIT)["items"]) == DEFAULT_LIMIT + 2
    with pytest.raises(serializers.ValidationError):
        _page(("created_at", "id"), limit=MAX_LIMIT + 1)


@pytest.mark.django_db
def test_a_cursor_of_another_ordering_is_refused(owner: Tenant) -> None:
    Workspace.objects.create(organization=owner.organization, name="Another")
    cursor = _page(("name", "id"), limit=1)["next_cursor"]
    # Two values for a sort key of one: not a cursor of this list.
    with pytest.raises(ValidationFailed) as caught:
        _page(("id",), limit=1, cursor=cursor)
    assert caught.value.fields == {"cursor": ["Invalid cursor."]}


def test_keyset_after_builds_the_lexicographic_condition() -> None:
    condition = keyset_after(["-created_at", "id"], ["2024-01-01", "abc"])
    text = str(condition)
    assert "created_at__lt" in text
    assert "id__gt" in text
    # The second key only decides among rows equal on the first.
    assert text.count("created_at") == 2


def test_query_data_keeps_empty_values_as_sent() -> None:
    assert query_data(_request(status="", limit="5")) == {"status": "", "limit": "5"}


def test_ok_wraps_data_in_the_envelope() -> None:
    response = ok({"id": 1}, status=201, headers={"Location": "/x"})
    assert response.status_code == 201
    assert response.data == {"status": "ok", "data": {"id": 1}}
    assert response["Location"] == "/x"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (dt.datetime(2024, 5, 1, 12, 30, tzinfo=dt.UTC), "2024-05-01T12:30:00Z"),
        (dt.datetime(2024, 5, 1, 12, 30, 0, 250_000, tzinfo=dt.UTC), "2024-05-01T12:30:00.250000Z"),
        (
            dt.datetime(2024, 5, 1, 16, 0, tzinfo=dt.timezone(dt.timedelta(hours=3, minutes=30))),
            "2024-05-01T16:00:00+03:30",
        ),
        (dt.datetime(2024, 5, 1, 12, 30), "2024-05-01T12:30:00"),
    ],
)
def test_timestamps_use_z_for_utc_and_keep_other_offsets(value: dt.datetime, text: str) -> None:
    assert timestamp(value) == text


class _Body(serializers.Serializer[Any]):
    id = UUIDField()


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        (str(uuid.UUID(int=5)), True),
        (uuid.UUID(int=5).hex, True),
        (0, False),
        (False, False),
        (5, False),
        (None, False),
        (["00000000-0000-0000-0000-000000000005"], False),
        ("not-a-uuid", False),
    ],
)
def test_a_uuid_field_takes_strings_only(value: object, valid: bool) -> None:
    body = _Body(data={"id": value})
    assert body.is_valid() is valid
    if valid:
        assert body.validated_data["id"] == uuid.UUID(int=5)
    else:
        assert "id" in body.errors


FIVE = uuid.UUID(int=5)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (FIVE, FIVE),
        (str(FIVE), FIVE),
        (FIVE.hex, FIVE),
        (str(FIVE).upper(), FIVE),
        ("not-a-uuid", None),
        ("", None),
        (str(FIVE) + "0", None),
        (5, None),
        (12345678901234567890123456789012, None),  # 32 digits as a string would spell one
        (None, None),
        ([str(FIVE)], None),
    ],
)
def test_an_id_is_a_uuid_or_a_string_that_spells_one(value: object, expected: uuid.UUID | None) -> None:
    assert uuid_of(value) == expected


def test_a_malformed_id_is_a_404_like_a_missing_one() -> None:
    assert uuid_or_404(str(FIVE)) == FIVE
    for malformed in ("not-a-uuid", "", None, 5):
        with pytest.raises(NotFound):
            uuid_or_404(malformed)


# DATABASE_URL


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://u:p@db/daneshyar", "must start with postgresql://"),
        ("sqlite:///db.sqlite3", "must start with postgresql://"),
        ("postgresql://u:p@db", "must name a database"),
        ("postgresql://u:p@db/", "must name a database"),
        ("postgresql://u:p@db:port/daneshyar", "invalid port"),
        ("postgresql://u:p@db:70000/daneshyar", "invalid port"),
    ],
)
def test_a_database_url_that_cannot_work_stops_start(url: str, message: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=message):
        database_from_url(url, conn_max_age=0)


@pytest.mark.parametrize("scheme", ["postgres", "postgresql"])
def test_both_postgres_schemes_and_defaults(scheme: str) -> None:
    db = database_from_url(f"{scheme}://db.internal/app%20data", conn_max_age=60)
    assert db["ENGINE"] == "django.db.backends.postgresql"
    assert (db["NAME"], db["USER"], db["PASSWORD"], db["HOST"], db["PORT"]) == (
        "app data",
        "",
        "",
        "db.internal",
        "",
    )
    assert db["OPTIONS"] == {}
    assert (db["CONN_MAX_AGE"], db["CONN_HEALTH_CHECKS"]) == (60, True)


def test_short_lived_connections_are_not_health_checked() -> None:
    db = database_from_url("postgresql://u@h/d", conn_max_age=0)
    assert (db["CONN_MAX_AGE"], db["CONN_HEALTH_CHECKS"]) == (0, False)


# gunicorn


@pytest.mark.parametrize(
    ("env", "seconds"),
    [
        ({}, 2 * 60.0 * 3),
        ({"OPENAI_MAX_RETRIES": "0"}, 2 * 60.0),
        ({"LOCAL_TIMEOUT_SECONDS": "400", "OPENAI_MAX_RETRIES": "0"}, 2 * 400.0),
        (
            {"OPENAI_TIMEOUT_SECONDS": "10", "OPENAI_MAX_RETRIES": "1", "LOCAL_TIMEOUT_SECONDS": "15"},
            2 * 20.0,
        ),
    ],
)
def test_the_longest_generation_covers_every_retry_of_the_slower_backend(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], seconds: float
) -> None:
    for name in ("LOCAL_TIMEOUT_SECONDS", "OPENAI_TIMEOUT_SECONDS", "OPENAI_MAX_RETRIES"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert gunicorn.longest_generation_seconds() == pytest.approx(seconds)


def test_the_generation_timeouts_are_read_strictly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_MAX_RETRIES", "11")
    with pytest.raises(ImproperlyConfigured, match="OPENAI_MAX_RETRIES must be at most 10"):
        gunicorn.longest_generation_seconds()


def test_a_failed_warm_up_is_logged_and_the_worker_serves_anyway(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    warmed: list[str] = []

    def broken() -> None:
        raise OSError("model file unreadable")

    monkeypatch.setattr(apps.get_app_config("retrieval"), "warm_up", broken)
    monkeypatch.setattr(
        apps.get_app_config("workspaces"), "warm_up", lambda: warmed.append("w"), raising=False
    )
    monkeypatch.setattr(apps.get_app_config("chat"), "warm_up", lambda: warmed.append("c"), raising=False)
    with caplog.at_level(logging.ERROR, logger="daneshyar"):
        gunicorn.post_worker_init(object())
    assert warmed == ["w", "c"]
    assert any("warm-up of retrieval failed" in r.getMessage() for r in caplog.records)
