from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.conftest import Tenant, api_client
from workspaces import services
from workspaces.keys import hash_key
from workspaces.models import ApiKey, ApiKeyScope

pytestmark = pytest.mark.django_db


def test_plaintext_key_is_never_stored_but_display_prefix_is(owner: Tenant) -> None:
    issued = services.api_key_create(organization=owner.organization, name="k", scope=ApiKeyScope.CHAT)
    assert issued.plaintext.startswith("dk_live_")
    assert len(issued.plaintext) - len("dk_live_") >= 32
    row = ApiKey.objects.get(pk=issued.api_key.pk)
    assert row.key_hash == hash_key(issued.plaintext)
    assert issued.plaintext.startswith(row.prefix)
    assert len(row.prefix) < len(issued.plaintext)
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM workspaces_apikey WHERE id = %s", [row.pk])
        stored = " ".join(str(v) for v in cursor.fetchone())
    assert issued.plaintext not in stored


def test_no_key_gets_401_envelope(db: None) -> None:
    response = api_client(None).get("/api/v1/workspaces/")
    assert response.status_code == 401
    assert response.json()["status"] == "error"
    assert response.json()["error"]["code"] == "unauthenticated"


def test_unknown_and_malformed_keys_get_401(db: None) -> None:
    for key in ["dk_live_" + "x" * 43, "not-a-key", ""]:
        response = api_client(key).get("/api/v1/workspaces/")
        assert response.status_code == 401, key
        assert response.json()["error"]["code"] == "unauthenticated"


def test_revoked_key_gets_401_at_once(owner: Tenant) -> None:
    client = owner.client("admin")
    assert client.get("/api/v1/workspaces/").status_code == 200
    services.api_key_revoke(api_key=ApiKey.objects.get(key_hash=hash_key(owner.admin_key)))
    response = client.get("/api/v1/workspaces/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"


def test_authentication_is_one_indexed_query(owner: Tenant) -> None:
    client = owner.client("chat")
    client.get("/api/v1/models/")  # first use writes last_used_at once
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/api/v1/models/")
    assert response.status_code == 200
    assert len(queries.captured_queries) == 1
    sql = queries.captured_queries[0]["sql"]
    assert '"key_hash" =' in sql and '"revoked_at" IS NULL' in sql
    with connection.cursor() as cursor:
        # The test table is tiny; make the planner show the index it can use.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + sql.replace("%s", "'x'"))
        plan = " ".join(row[0] for row in cursor.fetchall())
    assert "Index Scan" in plan and "key_hash" in plan


def test_last_used_at_is_recorded_without_writing_on_every_request(owner: Tenant) -> None:
    client = owner.client("chat")
    client.get("/api/v1/models/")
    key = ApiKey.objects.get(key_hash=hash_key(owner.chat_key))
    first = key.last_used_at
    assert first is not None
    client.get("/api/v1/models/")
    key.refresh_from_db()
    assert key.last_used_at == first
