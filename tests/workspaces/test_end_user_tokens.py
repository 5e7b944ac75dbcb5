"""End-user tokens (workspaces/tokens.py): minting, verifying, rotating the
signing secret. Owner / outsider in every test; tokens are sent as a browser
would (``Authorization: Bearer``)."""

from __future__ import annotations

import base64
import datetime as dt
import json
import time
import uuid
from typing import Any

import jwt
import pytest
from django.utils import timezone

from tests.chat.helpers import ingest_text
from tests.conftest import Tenant, api_client, token_client
from tests.factories import WorkspaceFactory
from workspaces import tokens
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def mint(tenant: Tenant, user: str = "alice", **body: Any) -> Any:
    return tenant.client("admin").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/end-user-tokens/",
        {"external_user_id": user, **body},
        format="json",
    )


def offline(workspace: Workspace, secret: str, **claims: Any) -> str:
    """A token minted as the integrator's server would: pyjwt and the signing secret."""
    now = int(time.time())
    base = {"wid": str(workspace.id), "sub": "alice", "scope": "chat", "iat": now, "exp": now + 600}
    return jwt.encode({**base, "jti": uuid.uuid4().hex, **claims}, secret, algorithm="HS256")


def unsigned(claims: dict[str, Any]) -> str:
    """The same claims with ``"alg": "none"`` and no signature."""

    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}."


def sessions(tenant: Tenant, token: str) -> Any:
    return token_client(token).get(f"/api/v1/workspaces/{tenant.workspace.id}/sessions/")


def rotate(tenant: Tenant, **body: Any) -> Any:
    return tenant.client("admin").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/signing-secret/", body, format="json"
    )


def test_an_admin_key_mints_a_token_with_the_documented_claims(owner: Tenant) -> None:
    before = timezone.now()
    response = mint(owner, ttl_seconds=120)
    assert response.status_code == 201
    data = response.json()["data"]
    claims = jwt.decode(data["token"], options={"verify_signature": False})
    assert claims["wid"] == str(owner.workspace.id) and claims["sub"] == "alice"
    assert claims["scope"] == "chat" and claims["exp"] - claims["iat"] == 120 and claims["jti"]
    expires = dt.datetime.fromisoformat(data["expires_at"])
    assert dt.timedelta(seconds=100) < expires - before < dt.timedelta(seconds=140)
    assert sessions(owner, data["token"]).status_code == 200


def test_the_default_lifetime_is_900_seconds_and_3600_the_most(owner: Tenant) -> None:
    claims = jwt.decode(mint(owner).json()["data"]["token"], options={"verify_signature": False})
    assert claims["exp"] - claims["iat"] == 900
    for bad in (0, 3601, "soon", None):
        response = mint(owner, ttl_seconds=bad)
        assert response.status_code == 400 and "ttl_seconds" in response.json()["error"]["fields"]


def test_minting_refuses_chat_keys_outsiders_and_foreign_resources(owner: Tenant, outsider: Tenant) -> None:
    url = f"/api/v1/workspaces/{owner.workspace.id}/end-user-tokens/"
    body = {"external_user_id": "alice"}
    assert owner.client("chat").post(url, body, format="json").status_code == 403
    assert outsider.client("admin").post(url, body, format="json").status_code == 404
    theirs = ingest_text(outsider.workspace, "Theirs", "Outsider text.")
    response = mint(owner, resource_ids=[str(theirs.id)])
    assert response.status_code == 400 and "resource_ids" in response.json()["error"]["fields"]
    assert mint(owner, external_user_id="").status_code == 400


def test_minting_honours_idempotency_key(owner: Tenant) -> None:
    url = f"/api/v1/workspaces/{owner.workspace.id}/end-user-tokens/"
    client = owner.client("admin")
    first = client.post(url, {"external_user_id": "alice"}, format="json", HTTP_IDEMPOTENCY_KEY="m-1")
    again = client.post(url, {"external_user_id": "alice"}, format="json", HTTP_IDEMPOTENCY_KEY="m-1")
    assert first.status_code == again.status_code == 201
    assert again["Idempotent-Replayed"] == "true" and again.json() == first.json()
    other = client.post(url, {"external_user_id": "bob"}, format="json", HTTP_IDEMPOTENCY_KEY="m-1")
    assert other.status_code == 422


def test_an_offline_minted_token_is_accepted(owner: Tenant) -> None:
    secret = rotate(owner).json()["data"]["signing_secret"]
    assert sessions(owner, offline(owner.workspace, secret)).status_code == 200
    scope_list = offline(owner.workspace, secret, scope="chat profile", resource_ids=None)
    assert sessions(owner, scope_list).status_code == 200


def test_an_expired_token_is_401_token_expired(owner: Tenant) -> None:
    secret = rotate(owner).json()["data"]["signing_secret"]
    now = int(time.time())
    response = sessions(owner, offline(owner.workspace, secret, iat=now - 1000, exp=now - 100))
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "token_expired"
    assert "invalid_token" in response["WWW-Authenticate"]


def test_clocks_may_differ_by_the_documented_30_seconds(owner: Tenant) -> None:
    """docs/embedding.md: exp and iat are checked with 30 s of leeway."""
    secret = rotate(owner).json()["data"]["signing_secret"]
    now = int(time.time())

    def status(iat: int, exp: int) -> tuple[int, str | None]:
        response = sessions(owner, offline(owner.workspace, secret, iat=iat, exp=exp))
        return response.status_code, response.json().get("error", {}).get("code")

    assert status(now - 600, now - 20) == (200, None)  # expired 20 s ago by this clock
    assert status(now - 600, now - 40) == (401, "token_expired")
    assert status(now + 20, now + 600) == (200, None)  # issued 20 s ahead of this clock
    assert status(now + 40, now + 600) == (401, "token_invalid")


@pytest.mark.parametrize(
    "claims",
    [
        {"scope": "admin"},
        {"sub": ""},
        {"sub": "x" * 256},
        {"sub": "ali\x00ce"},
        {"sub": "ali\ud800ce"},
        {"wid": "not-a-uuid"},
        {"exp": int(time.time()) + 7200},  # lives longer than 3600 s
        {"resource_ids": "all"},
        {"resource_ids": []},
        {"resource_ids": [1]},
        {"resource_ids": ["not-a-uuid"]},
    ],
)
def test_a_token_with_bad_claims_is_401_token_invalid(owner: Tenant, claims: dict[str, Any]) -> None:
    secret = rotate(owner).json()["data"]["signing_secret"]
    response = sessions(owner, offline(owner.workspace, secret, **claims))
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "token_invalid"


def test_malformed_unsigned_and_badly_signed_tokens_are_401_token_invalid(owner: Tenant) -> None:
    secret = rotate(owner).json()["data"]["signing_secret"]
    claims = jwt.decode(offline(owner.workspace, secret), options={"verify_signature": False})
    candidates = [
        "not.a.token",
        "garbage",
        offline(owner.workspace, "another secret of a good length, 32 bytes+"),
        unsigned(claims),
        jwt.encode(claims, secret, algorithm="HS512"),
        offline(owner.workspace, secret)[:-3] + "abc",
    ]
    for token in candidates:
        response = sessions(owner, token)
        assert response.status_code == 401, token
        assert response.json()["error"]["code"] == "token_invalid", token


def test_a_token_is_only_valid_on_its_own_workspace(owner: Tenant, outsider: Tenant) -> None:
    token = mint(owner).json()["data"]["token"]
    sibling = WorkspaceFactory.create(organization=owner.organization)
    for workspace_id in (sibling.id, outsider.workspace.id, uuid.uuid4()):
        response = token_client(token).get(f"/api/v1/workspaces/{workspace_id}/sessions/")
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "token_invalid"


def test_a_token_of_a_deleted_workspace_is_invalid(owner: Tenant) -> None:
    token = mint(owner).json()["data"]["token"]
    workspace_id = owner.workspace.id
    owner.workspace.delete()
    response = token_client(token).get(f"/api/v1/workspaces/{workspace_id}/sessions/")
    assert response.status_code == 401 and response.json()["error"]["code"] == "token_invalid"


def test_rotation_keeps_the_previous_secret_for_its_grace_then_revokes(owner: Tenant) -> None:
    old_token = mint(owner).json()["data"]["token"]
    rotated = rotate(owner, grace_seconds=600)
    assert rotated.status_code == 201
    data = rotated.json()["data"]
    assert data["signing_secret"].startswith("dk_sign_") and data["previous_valid_until"] is not None
    # In the grace period: tokens of both secrets work.
    assert sessions(owner, old_token).status_code == 200
    assert sessions(owner, offline(owner.workspace, data["signing_secret"])).status_code == 200
    # After it: the old one is revoked.
    Workspace.objects.filter(pk=owner.workspace.pk).update(
        token_secret_previous_until=timezone.now() - dt.timedelta(seconds=1)
    )
    response = sessions(owner, old_token)
    assert response.status_code == 401 and response.json()["error"]["code"] == "token_invalid"
    assert sessions(owner, offline(owner.workspace, data["signing_secret"])).status_code == 200


def test_rotation_without_grace_revokes_at_once_and_drops_older_secrets(owner: Tenant) -> None:
    first = rotate(owner).json()["data"]["signing_secret"]
    second = rotate(owner, grace_seconds=600).json()["data"]["signing_secret"]
    assert sessions(owner, offline(owner.workspace, first)).status_code == 200  # in its grace
    third = rotate(owner, grace_seconds=0).json()["data"]
    assert third["previous_valid_until"] is None
    for secret in (first, second):
        assert sessions(owner, offline(owner.workspace, secret)).status_code == 401
    assert sessions(owner, offline(owner.workspace, third["signing_secret"])).status_code == 200


def test_rotation_is_admin_only_and_validated(owner: Tenant, outsider: Tenant) -> None:
    url = f"/api/v1/workspaces/{owner.workspace.id}/signing-secret/"
    assert owner.client("chat").post(url, {}, format="json").status_code == 403
    assert outsider.client("admin").post(url, {}, format="json").status_code == 404
    for bad in (-1, 86_401, "later"):
        assert rotate(owner, grace_seconds=bad).status_code == 400


def test_the_secret_is_stored_encrypted_and_never_shown_again(owner: Tenant) -> None:
    secret = rotate(owner).json()["data"]["signing_secret"]
    row = Workspace.objects.get(pk=owner.workspace.pk)
    assert secret not in row.token_secret and row.token_secret
    shown = owner.client("admin").get(f"/api/v1/workspaces/{owner.workspace.id}/")
    assert secret not in shown.content.decode()
    assert not {"token_secret", "signing_secret"} & set(shown.json()["data"])


def test_a_changed_api_key_hash_secret_makes_stored_secrets_unreadable(owner: Tenant, settings: Any) -> None:
    token = mint(owner).json()["data"]["token"]
    settings.API_KEY_HASH_SECRET = "a different deployment secret"
    workspace = Workspace.objects.get(pk=owner.workspace.pk)
    with pytest.raises(Exception, match="Invalid end-user token"):
        tokens.end_user_token_verify(token)
    # Minting again makes a fresh secret rather than failing.
    fresh = tokens.end_user_token_mint(workspace=workspace, external_user_id="alice")
    assert tokens.end_user_token_verify(fresh.token).external_user_id == "alice"


def test_a_bearer_api_key_still_works_beside_tokens(owner: Tenant) -> None:
    client = api_client(None)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {owner.admin_key}")
    assert client.get(f"/api/v1/workspaces/{owner.workspace.id}/sessions/").status_code == 200
