"""API key material, both ways of sending a key, the tenancy services and
selectors, and the console's staff scope."""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ValidationError
from pytest_django.fixtures import Settings

from daneshyar.exceptions import NotFound, ValidationFailed
from tests.conftest import Tenant, api_client
from workspaces import services
from workspaces.keys import (
    DISPLAY_PREFIX_LENGTH,
    KEY_PREFIX,
    display_prefix,
    generate_key,
    hash_key,
    looks_like_key,
)
from workspaces.models import ApiKey, ApiKeyScope, GenerationFallback, StaffMembership, Workspace
from workspaces.selectors import workspace_get, workspace_list
from workspaces.staff import (
    EVERYTHING,
    NOTHING,
    StaffScope,
    staff_scope,
    staff_workspace_get,
    staff_workspace_list,
)

# Key material


def test_generated_keys_are_distinct_and_look_like_keys() -> None:
    keys = {generate_key() for _ in range(50)}
    assert len(keys) == 50
    for key in keys:
        assert key.startswith(KEY_PREFIX)
        assert len(key) == len(KEY_PREFIX) + 43  # 32 random bytes, URL-safe
        assert looks_like_key(key)


@pytest.mark.parametrize(
    ("value", "looks"),
    [
        ("dk_live_" + "a" * 32, True),
        ("dk_live_" + "A-_9" * 32, True),
        ("dk_live_" + "a" * 31, False),
        ("dk_live_" + "a" * 129, False),
        ("dk_test_" + "a" * 40, False),
        ("DK_LIVE_" + "a" * 40, False),
        ("dk_live_" + "a" * 39 + "=", False),
        ("dk_live_" + "a" * 39 + " ", False),
        ("Bearer dk_live_" + "a" * 40, False),
        ("", False),
    ],
)
def test_only_well_formed_keys_reach_the_database(value: str, looks: bool) -> None:
    assert looks_like_key(value) is looks


def test_the_hash_is_keyed_by_the_deployments_secret(settings: Settings) -> None:
    key = generate_key()
    settings.API_KEY_HASH_SECRET = "one-secret"
    first = hash_key(key)
    assert hash_key(key) == first and len(first) == 64
    settings.API_KEY_HASH_SECRET = "another-secret"
    assert hash_key(key) != first
    assert hash_key(generate_key()) != hash_key(key)


def test_the_display_prefix_shows_six_random_characters() -> None:
    key = generate_key()
    assert display_prefix(key) == key[:DISPLAY_PREFIX_LENGTH]
    assert len(display_prefix(key)) == len(KEY_PREFIX) + 6


# Sending a key


def _models_url(tenant: Tenant) -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/openai/v1/models"


@pytest.mark.django_db
def test_a_key_with_surrounding_spaces_still_authenticates(owner: Tenant) -> None:
    assert api_client(f"  {owner.chat_key} ").get("/api/v1/models/").status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
def test_the_openai_endpoint_takes_a_bearer_key(owner: Tenant, scheme: str) -> None:
    response = api_client(None).get(_models_url(owner), HTTP_AUTHORIZATION=f"{scheme} {owner.chat_key}")
    assert response.status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize(
    "header",
    ["Basic dXNlcjpwYXNz", "Token {key}", "{key}", ""],
)
def test_the_openai_endpoint_ignores_other_authorization_schemes(owner: Tenant, header: str) -> None:
    response = api_client(None).get(_models_url(owner), HTTP_AUTHORIZATION=header.format(key=owner.chat_key))
    assert response.status_code == 401


@pytest.mark.django_db
@pytest.mark.parametrize("credentials", ["dk_live_short", "not-a-key", "dk_live_" + "b" * 43])
def test_a_bad_bearer_key_is_401_in_openai_shape(owner: Tenant, credentials: str) -> None:
    response = api_client(None).get(_models_url(owner), HTTP_AUTHORIZATION=f"Bearer {credentials}")
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "authentication_error"


@pytest.mark.django_db
def test_a_bearer_key_of_another_organization_gets_404(owner: Tenant, outsider: Tenant) -> None:
    response = api_client(None).get(_models_url(owner), HTTP_AUTHORIZATION=f"Bearer {outsider.chat_key}")
    assert response.status_code == 404


@pytest.mark.django_db
def test_the_native_api_takes_a_bearer_key_like_x_api_key(owner: Tenant, outsider: Tenant) -> None:
    client = api_client(None)
    assert client.get("/api/v1/models/", HTTP_AUTHORIZATION=f"Bearer {owner.chat_key}").status_code == 200
    own = client.get(
        f"/api/v1/workspaces/{owner.workspace.id}/", HTTP_AUTHORIZATION=f"Bearer {owner.admin_key}"
    )
    assert own.status_code == 200
    # The same rules as X-API-Key: scope (403), tenancy (404), revocation (401).
    scoped = client.get(
        f"/api/v1/workspaces/{owner.workspace.id}/", HTTP_AUTHORIZATION=f"Bearer {owner.chat_key}"
    )
    assert scoped.status_code == 403
    foreign = client.get(
        f"/api/v1/workspaces/{owner.workspace.id}/", HTTP_AUTHORIZATION=f"Bearer {outsider.admin_key}"
    )
    assert foreign.status_code == 404
    unknown = client.get("/api/v1/models/", HTTP_AUTHORIZATION="Bearer dk_live_" + "x" * 43)
    assert unknown.status_code == 401
    assert unknown.json()["error"]["code"] == "unauthenticated"


@pytest.mark.django_db
def test_a_revoked_bearer_key_gets_401(owner: Tenant) -> None:
    services.api_key_revoke(api_key=ApiKey.objects.get(organization=owner.organization, name="chat"))
    response = api_client(None).get(_models_url(owner), HTTP_AUTHORIZATION=f"Bearer {owner.chat_key}")
    assert response.status_code == 401


# Services


@pytest.mark.django_db
def test_workspace_create_refuses_unknown_fields(owner: Tenant) -> None:
    with pytest.raises(ValueError, match="unknown workspace field 'organization_id'"):
        services.workspace_create(organization=owner.organization, name="x", organization_id=uuid.uuid4())
    with pytest.raises(ValueError, match="unknown workspace field 'id'"):
        services.workspace_update(workspace=owner.workspace, id=uuid.uuid4())


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fields", "invalid"),
    [
        ({"top_k": 0}, "top_k"),
        ({"top_k": 51}, "top_k"),
        ({"widened_top_k": 51}, "widened_top_k"),
        ({"per_resource_k": 21}, "per_resource_k"),
        ({"history_turns": 101}, "history_turns"),
        ({"retention_days": 0}, "retention_days"),
        ({"on_generation_unavailable": "retry"}, "on_generation_unavailable"),
        ({"name": ""}, "name"),
    ],
)
def test_workspace_settings_are_validated_before_saving(
    owner: Tenant, fields: dict[str, object], invalid: str
) -> None:
    name = owner.workspace.name
    with pytest.raises(ValidationError) as caught:
        services.workspace_update(workspace=owner.workspace, **fields)
    assert set(caught.value.message_dict) == {invalid}
    stored = Workspace.objects.get(pk=owner.workspace.pk)
    assert (stored.name, stored.top_k, stored.widened_top_k, stored.per_resource_k) == (name, 5, 15, 3)
    assert (stored.history_turns, stored.retention_days, stored.on_generation_unavailable) == (
        20,
        None,
        "extractive",
    )


@pytest.mark.django_db
def test_workspace_update_writes_only_the_given_fields(owner: Tenant) -> None:
    before = owner.workspace.updated_at
    # Another writer changes the prompt meanwhile: this update must not undo it.
    Workspace.objects.filter(pk=owner.workspace.pk).update(system_prompt="Set elsewhere.")
    services.workspace_update(
        workspace=owner.workspace, top_k=9, on_generation_unavailable=GenerationFallback.ERROR
    )
    stored = Workspace.objects.get(pk=owner.workspace.pk)
    assert (stored.top_k, stored.on_generation_unavailable) == (9, "error")
    assert stored.system_prompt == "Set elsewhere."
    assert stored.updated_at > before


@pytest.mark.django_db
def test_api_key_create_refuses_an_unknown_scope(owner: Tenant) -> None:
    with pytest.raises(ValidationFailed) as caught:
        services.api_key_create(organization=owner.organization, name="x", scope="superuser")
    assert caught.value.fields == {"scope": ["Must be chat or admin."]}


@pytest.mark.django_db
def test_api_key_create_names_every_foreign_or_unknown_workspace(owner: Tenant, outsider: Tenant) -> None:
    unknown = uuid.uuid4()
    with pytest.raises(ValidationFailed) as caught:
        services.api_key_create(
            organization=owner.organization,
            name="x",
            workspace_ids=[owner.workspace.id, outsider.workspace.id, unknown],
        )
    assert caught.value.fields == {
        "workspace_ids": [f"Unknown workspace {outsider.workspace.id}.", f"Unknown workspace {unknown}."]
    }
    assert not ApiKey.objects.filter(name="x").exists()


@pytest.mark.django_db
def test_an_issued_key_stores_only_its_hash_and_prefix(owner: Tenant) -> None:
    issued = services.api_key_create(organization=owner.organization, name="x", scope=ApiKeyScope.ADMIN)
    stored = ApiKey.objects.get(pk=issued.api_key.pk)
    assert stored.key_hash == hash_key(issued.plaintext)
    assert stored.prefix == display_prefix(issued.plaintext)
    assert issued.plaintext not in {str(value) for value in stored.__dict__.values()}
    assert stored.is_admin and stored.is_active


# Selectors


@pytest.mark.django_db
def test_a_limited_key_lists_and_gets_only_its_workspaces(owner: Tenant, outsider: Tenant) -> None:
    second = services.workspace_create(organization=owner.organization, name="Second")
    services.workspace_create(organization=owner.organization, name="Third")
    limited = services.api_key_create(
        organization=owner.organization, name="limited", workspace_ids=[second.id]
    ).api_key
    everything = ApiKey.objects.get(organization=owner.organization, name="admin")
    assert list(workspace_list(api_key=limited)) == [second]
    assert {w.name for w in workspace_list(api_key=everything)} == {owner.workspace.name, "Second", "Third"}
    assert workspace_get(api_key=limited, workspace_id=str(second.id)) == second
    for workspace_id in (owner.workspace.id, outsider.workspace.id, uuid.uuid4(), "nope", ""):
        with pytest.raises(NotFound):
            workspace_get(api_key=limited, workspace_id=workspace_id)
    with pytest.raises(NotFound):
        workspace_get(api_key=everything, workspace_id=outsider.workspace.id)


# Staff scope


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("kind", "everything"),
    [
        ("superuser", True),
        ("staff", True),
        ("inactive_staff", False),
        ("not_staff", False),
        ("inactive_superuser", False),
    ],
)
def test_who_sees_every_organization(kind: str, everything: bool) -> None:
    user = User.objects.create_user(
        kind,
        is_staff=kind != "not_staff",
        is_superuser="superuser" in kind,
        is_active=not kind.startswith("inactive"),
    )
    scope = staff_scope(user)
    assert scope.everything is everything
    if not everything:
        assert scope == NOTHING


def test_an_anonymous_visitor_sees_nothing() -> None:
    assert staff_scope(AnonymousUser()) == NOTHING


@pytest.mark.django_db
def test_a_member_sees_one_organization_and_the_scope_is_read_once(owner: Tenant, outsider: Tenant) -> None:
    user = User.objects.create_user("member", is_staff=True)
    StaffMembership.objects.create(user=user, organization=owner.organization)
    scope = staff_scope(user)
    assert scope == StaffScope(everything=False, organization_id=owner.organization.id)
    assert scope.limited
    assert scope.allows(owner.organization.id) and not scope.allows(outsider.organization.id)
    # Read once per request's user object.
    assert staff_scope(user) is scope
    assert list(staff_workspace_list(user=user)) == [owner.workspace]
    assert staff_workspace_get(user=user, workspace_id=owner.workspace.id) == owner.workspace
    for workspace_id in (outsider.workspace.id, uuid.uuid4(), "garbage"):
        with pytest.raises(NotFound):
            staff_workspace_get(user=user, workspace_id=workspace_id)


@pytest.mark.django_db
def test_scope_filters_by_any_path_to_the_organization(owner: Tenant, outsider: Tenant) -> None:
    mine = StaffScope(everything=False, organization_id=owner.organization.id)
    assert list(Workspace.objects.filter(mine.q("organization"))) == [owner.workspace]
    assert {w.id for w in Workspace.objects.filter(EVERYTHING.q("organization"))} == {
        owner.workspace.id,
        outsider.workspace.id,
    }
    assert not Workspace.objects.filter(NOTHING.q("organization")).exists()
    keys = ApiKey.objects.filter(mine.q("organization"))
    assert {k.organization_id for k in keys} == {owner.organization.id}
    assert not EVERYTHING.limited and EVERYTHING.allows(outsider.organization.id)
    assert not NOTHING.allows(owner.organization.id)
