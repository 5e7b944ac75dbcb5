"""Rate-limit precedence, headers and switches, and Idempotency-Key on a
creating POST that needs no model (workspace creation), on the real Redis
and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile, UploadedFile
from django.utils import timezone
from pytest_django.fixtures import Settings
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from tests.conftest import Tenant
from workspaces.idempotency import MAX_KEY_LENGTH, fingerprint, idempotency_expired_delete
from workspaces.models import ApiKey, IdempotencyRecord, IdempotencyState, Organization, Workspace
from workspaces.ratelimit import BUCKET_SETTINGS, Usage, limit_for

pytestmark = pytest.mark.django_db

WORKSPACES = "/api/v1/workspaces/"


# Which limit applies


@pytest.mark.parametrize("bucket", sorted(BUCKET_SETTINGS))
@pytest.mark.parametrize(
    ("workspace_value", "organization_value", "expected"),
    [(None, None, 40), (None, 7, 7), (3, 7, 3), (3, None, 3), (0, 7, 0)],
)
def test_the_workspace_limit_beats_the_organizations_which_beats_the_setting(
    settings: Settings,
    bucket: str,
    workspace_value: int | None,
    organization_value: int | None,
    expected: int,
) -> None:
    field, setting = BUCKET_SETTINGS[bucket]
    setattr(settings, setting, 40)
    organization = Organization(name="o", **{field: organization_value})
    workspace = Workspace(name="w", **{field: workspace_value})
    assert limit_for(bucket, workspace=workspace, organization=organization) == expected
    assert limit_for(bucket, workspace=None, organization=None) == 40


def test_usage_headers_name_limit_remaining_and_reset() -> None:
    assert Usage(limit=10, remaining=3, reset_seconds=42).headers() == {
        "RateLimit-Limit": "10",
        "RateLimit-Remaining": "3",
        "RateLimit-Reset": "42",
    }


# The requests bucket, over HTTP


def test_every_response_of_a_key_counts_down_its_requests_bucket(owner: Tenant, settings: Settings) -> None:
    settings.RATE_LIMIT_REQUESTS_PER_MINUTE = 3
    client = owner.client()
    remaining = []
    for _ in range(3):
        response = client.get(WORKSPACES)
        assert response.status_code == 200
        assert response["RateLimit-Limit"] == "3"
        assert 1 <= int(response["RateLimit-Reset"]) <= 60
        remaining.append(int(response["RateLimit-Remaining"]))
    assert remaining == [2, 1, 0]
    refused = client.get(WORKSPACES)
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["code"] == "rate_limited"
    assert "Over the limit of 3 per minute (requests)" in error["message"]
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert refused["RateLimit-Remaining"] == "0"


def test_a_key_over_its_limit_does_not_slow_another_organization(
    owner: Tenant, outsider: Tenant, settings: Settings
) -> None:
    settings.RATE_LIMIT_REQUESTS_PER_MINUTE = 1
    assert owner.client().get(WORKSPACES).status_code == 200
    assert owner.client().get(WORKSPACES).status_code == 429
    assert outsider.client().get(WORKSPACES).status_code == 200


def test_an_organization_limit_of_zero_refuses_every_request(owner: Tenant, outsider: Tenant) -> None:
    owner.organization.rate_requests_per_minute = 0
    owner.organization.save()
    refused = owner.client().get(WORKSPACES)
    assert refused.status_code == 429
    assert refused["RateLimit-Limit"] == "0"
    assert outsider.client().get(WORKSPACES).status_code == 200


def test_with_limits_switched_off_nothing_is_counted(owner: Tenant, settings: Settings) -> None:
    settings.RATE_LIMIT_ENABLED = False
    settings.RATE_LIMIT_REQUESTS_PER_MINUTE = 1
    for _ in range(3):
        response = owner.client().get(WORKSPACES)
        assert response.status_code == 200
        assert "RateLimit-Limit" not in response


def test_requests_without_a_key_carry_no_rate_limit_headers(db: None) -> None:
    from tests.conftest import api_client

    response = api_client(None).get(WORKSPACES)
    assert response.status_code == 401
    assert "RateLimit-Limit" not in response


# Idempotency-Key on POST /workspaces/


def create(tenant: Tenant, body: Any, key: str | None) -> Any:
    headers: dict[str, Any] = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    return tenant.client().post(WORKSPACES, body, format="json", **headers)


def test_a_replay_answers_the_first_response_and_creates_nothing(owner: Tenant) -> None:
    first = create(owner, {"name": "Claims", "top_k": 7}, "create-claims")
    assert first.status_code == 201 and "Idempotent-Replayed" not in first
    again = create(owner, {"top_k": 7, "name": "Claims"}, "create-claims")  # same body, reordered
    assert again.status_code == 201
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert Workspace.objects.filter(name="Claims").count() == 1


def test_without_a_key_every_post_creates(owner: Tenant) -> None:
    for _ in range(2):
        assert create(owner, {"name": "Twice"}, None).status_code == 201
    assert Workspace.objects.filter(name="Twice").count() == 2
    assert not IdempotencyRecord.objects.exists()


def test_keys_belong_to_one_api_key(owner: Tenant, outsider: Tenant) -> None:
    assert create(owner, {"name": "Mine"}, "shared-key").status_code == 201
    theirs = create(outsider, {"name": "Mine"}, "shared-key")
    assert theirs.status_code == 201 and "Idempotent-Replayed" not in theirs
    assert {w.organization_id for w in Workspace.objects.filter(name="Mine")} == {
        owner.organization.id,
        outsider.organization.id,
    }


def test_the_same_key_for_another_request_is_422(owner: Tenant) -> None:
    assert create(owner, {"name": "A"}, "k1").status_code == 201
    reused = create(owner, {"name": "B"}, "k1")
    assert reused.status_code == 422
    assert reused.json()["error"]["code"] == "idempotency_key_reused"
    assert not Workspace.objects.filter(name="B").exists()


@pytest.mark.parametrize(
    "key",
    ["", "   ", "k" * (MAX_KEY_LENGTH + 1), "tab\there", "bell\x07"],
    ids=["empty", "blank", "too-long", "tab", "control"],
)
def test_a_malformed_key_is_a_400_naming_the_header(owner: Tenant, key: str) -> None:
    response = create(owner, {"name": "Never"}, key)
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {
        "Idempotency-Key": [f"1 to {MAX_KEY_LENGTH} printable characters."]
    }
    assert not Workspace.objects.filter(name="Never").exists()


def test_the_longest_key_and_surrounding_spaces_are_fine(owner: Tenant) -> None:
    key = "k" * MAX_KEY_LENGTH
    assert create(owner, {"name": "Long"}, f" {key} ").status_code == 201
    assert create(owner, {"name": "Long"}, key)["Idempotent-Replayed"] == "true"


def test_a_refused_request_frees_its_key_for_the_corrected_one(owner: Tenant) -> None:
    assert create(owner, {"name": "", "top_k": 0}, "fix-me").status_code == 400
    assert not IdempotencyRecord.objects.exists()
    assert create(owner, {"name": "Fixed"}, "fix-me").status_code == 201


def test_a_forbidden_request_stores_nothing(owner: Tenant) -> None:
    from tests.conftest import api_client
    from workspaces import services

    limited = services.api_key_create(
        organization=owner.organization, name="limited", workspace_ids=[owner.workspace.id]
    ).plaintext
    response = api_client(limited).post(WORKSPACES, {"name": "No"}, format="json", HTTP_IDEMPOTENCY_KEY="f")
    assert response.status_code == 403
    assert not IdempotencyRecord.objects.exists()


def test_a_running_request_holds_its_key_until_its_lease_ends(owner: Tenant) -> None:
    assert create(owner, {"name": "Leased"}, "lease").status_code == 201
    record = IdempotencyRecord.objects.get(key="lease")
    assert record.state == IdempotencyState.DONE
    # As if the first request were still running...
    record.state = IdempotencyState.IN_PROGRESS
    record.locked_until = timezone.now() + timedelta(minutes=5)
    record.save()
    busy = create(owner, {"name": "Leased"}, "lease")
    assert busy.status_code == 409 and busy.json()["error"]["code"] == "request_in_progress"
    # ...and as if its process had died: past the lease a retry takes over.
    IdempotencyRecord.objects.filter(pk=record.pk).update(locked_until=timezone.now() - timedelta(seconds=1))
    taken = create(owner, {"name": "Leased"}, "lease")
    assert taken.status_code == 201 and "Idempotent-Replayed" not in taken
    assert IdempotencyRecord.objects.get(pk=record.pk).state == IdempotencyState.DONE


def test_an_expired_key_is_new_again_and_the_sweep_deletes_only_expired_records(owner: Tenant) -> None:
    assert create(owner, {"name": "Old"}, "old").status_code == 201
    assert create(owner, {"name": "Kept"}, "kept").status_code == 201
    IdempotencyRecord.objects.filter(key="old").update(expires_at=timezone.now() - timedelta(seconds=1))
    # Another body would be 422 within the day; after it, the key is free.
    assert create(owner, {"name": "New"}, "old").status_code == 201
    IdempotencyRecord.objects.filter(key="old").update(expires_at=timezone.now() - timedelta(seconds=1))
    assert idempotency_expired_delete() == 1
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["kept"]
    assert IdempotencyRecord.objects.get(key="kept").api_key == ApiKey.objects.get(
        organization=owner.organization, name="admin"
    )


# What makes two requests the same


def _json_request(path: str, body: Any, method: str = "post") -> Request:
    factory = APIRequestFactory()
    raw = getattr(factory, method)(path, body, format="json")
    return Request(raw, parsers=[JSONParser()])


def _upload_request(content: bytes, title: str = "Doc") -> Request:
    raw = APIRequestFactory().post(
        "/up/", {"title": title, "file": SimpleUploadedFile("a.txt", content)}, format="multipart"
    )
    return Request(raw, parsers=[MultiPartParser()])


def test_the_fingerprint_ignores_json_key_order_and_whitespace() -> None:
    a = _json_request("/x/", {"a": 1, "b": [1, 2], "c": {"d": None}})
    b = _json_request("/x/", {"c": {"d": None}, "b": [1, 2], "a": 1})
    assert fingerprint(a) == fingerprint(b)


@pytest.mark.parametrize(
    ("other_path", "other_body", "other_method"),
    [
        ("/y/", {"a": 1}, "post"),
        ("/x/", {"a": 2}, "post"),
        ("/x/", {"a": "1"}, "post"),
        ("/x/", {"a": [1]}, "post"),
        ("/x/", {"a": 1}, "put"),
    ],
)
def test_the_fingerprint_tells_other_requests_apart(
    other_path: str, other_body: Any, other_method: str
) -> None:
    assert fingerprint(_json_request("/x/", {"a": 1})) != fingerprint(
        _json_request(other_path, other_body, other_method)
    )


def test_the_fingerprint_of_an_upload_covers_the_files_bytes_and_leaves_it_readable() -> None:
    first = _upload_request(b"version one")
    assert fingerprint(first) == fingerprint(_upload_request(b"version one"))
    assert fingerprint(first) != fingerprint(_upload_request(b"version two"))
    assert fingerprint(first) != fingerprint(_upload_request(b"version one", title="Other"))
    # The view reads the file after the fingerprint did.
    uploaded = first.FILES.get("file")
    assert isinstance(uploaded, UploadedFile)
    assert uploaded.read() == b"version one"
