"""API keys in the admin console: issuing one for a workspace of another
organization is refused, the revoke action stops keys at once, and the
change page never lets a key's scope or organization move."""

from __future__ import annotations

import pytest

from tests.conftest import Tenant
from tests.staff import Staff, make_staff
from workspaces.models import ApiKey, Organization

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(db: None) -> Staff:
    return make_staff("root", superuser=True)


def test_a_key_for_another_organizations_workspace_is_refused(
    owner: Tenant, outsider: Tenant, root: Staff
) -> None:
    response = root.client.post(
        "/admin/workspaces/apikey/add/",
        {
            "organization": str(owner.organization.id),
            "name": "mixed",
            "scope": "chat",
            "workspaces": [str(owner.workspace.id), str(outsider.workspace.id)],
        },
    )
    assert response.status_code == 200  # the form again, with the error
    assert f"Workspaces of another organization: {outsider.workspace.name}" in response.content.decode()
    assert not ApiKey.objects.filter(name="mixed").exists()


def test_a_key_without_workspaces_may_use_every_workspace(owner: Tenant, root: Staff) -> None:
    response = root.client.post(
        "/admin/workspaces/apikey/add/",
        {"organization": str(owner.organization.id), "name": "everywhere", "scope": "admin"},
    )
    assert response.status_code == 200
    key = ApiKey.objects.get(name="everywhere")
    assert key.allowed_workspace_ids == [] and key.scope == "admin"
    assert "dk_live_" in response.content.decode()


def test_the_revoke_action_stops_the_selected_keys_only(owner: Tenant, root: Staff) -> None:
    chat = ApiKey.objects.get(organization=owner.organization, name="chat")
    admin = ApiKey.objects.get(organization=owner.organization, name="admin")
    response = root.client.post(
        "/admin/workspaces/apikey/",
        {"action": "revoke_keys", "_selected_action": [str(chat.pk)]},
        follow=True,
    )
    assert response.status_code == 200
    assert "Revoked 1 key(s)." in response.content.decode()
    assert owner.client("chat").get("/api/v1/models/").status_code == 401
    assert owner.client("admin").get("/api/v1/models/").status_code == 200
    chat.refresh_from_db()
    admin.refresh_from_db()
    assert chat.revoked_at is not None and admin.revoked_at is None


def test_revoking_an_already_revoked_key_keeps_its_first_time(owner: Tenant, root: Staff) -> None:
    chat = ApiKey.objects.get(organization=owner.organization, name="chat")
    select = {"action": "revoke_keys", "_selected_action": [str(chat.pk)]}
    root.client.post("/admin/workspaces/apikey/", select)
    chat.refresh_from_db()
    first = chat.revoked_at
    root.client.post("/admin/workspaces/apikey/", select)
    chat.refresh_from_db()
    assert chat.revoked_at == first


def test_the_change_page_keeps_scope_and_organization(owner: Tenant, outsider: Tenant, root: Staff) -> None:
    chat = ApiKey.objects.get(organization=owner.organization, name="chat")
    url = f"/admin/workspaces/apikey/{chat.pk}/change/"
    page = root.client.get(url)
    assert page.status_code == 200
    response = root.client.post(
        url,
        {
            "name": "renamed",
            "scope": "admin",
            "organization": str(outsider.organization.id),
            "revoked_at_0": "",
            "revoked_at_1": "",
        },
    )
    assert response.status_code == 302
    chat.refresh_from_db()
    assert chat.name == "renamed"
    assert chat.scope == "chat" and chat.organization_id == owner.organization.id


def test_the_key_list_filters_active_and_revoked_keys(owner: Tenant, root: Staff) -> None:
    ApiKey.objects.filter(organization=owner.organization, name="chat").update(prefix="dk_live_chatxx")
    ApiKey.objects.filter(organization=owner.organization, name="admin").update(prefix="dk_live_admnxx")
    root.client.post(
        "/admin/workspaces/apikey/",
        {"action": "revoke_keys", "_selected_action": [str(ApiKey.objects.get(name="chat").pk)]},
    )
    revoked = root.client.get("/admin/workspaces/apikey/", {"revoked_at__isempty": "0"}).content.decode()
    active = root.client.get("/admin/workspaces/apikey/", {"revoked_at__isempty": "1"}).content.decode()
    assert "dk_live_chatxx" in revoked and "dk_live_admnxx" not in revoked
    assert "dk_live_admnxx" in active and "dk_live_chatxx" not in active


def test_a_superuser_creates_organizations(root: Staff) -> None:
    response = root.client.post("/admin/workspaces/organization/add/", {"name": "New tenant"})
    assert response.status_code == 302
    assert Organization.objects.filter(name="New tenant").exists()
