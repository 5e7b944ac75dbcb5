"""The admin seen by a staff account limited to one organization
(``StaffMembership``, ``workspaces.staff``): every list, filter, form and
page shows only that organization's rows, and another organization's object
is a 404, exactly like a missing one. Superusers manage the memberships."""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile

from resources.models import Resource, ResourceStatus
from retrieval.models import Passage
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant
from tests.staff import Staff, grant, make_staff
from tests.transcripts.factories import conversation
from workspaces.models import StaffMembership

pytestmark = pytest.mark.django_db


@pytest.fixture
def curator(owner: Tenant) -> Staff:
    return make_staff("curator", organization=owner.organization)


@pytest.fixture
def root(db: None) -> Staff:
    return make_staff("root", superuser=True)


def _objects(tenant: Tenant) -> dict[str, uuid.UUID]:
    """One object of each kind a console route names, in ``tenant``'s workspace."""
    resource = ingest_text(
        tenant.workspace, f"{tenant.organization.name} guide", "Opening hours are nine to five."
    )
    Resource.objects.filter(pk=resource.pk).update(status=ResourceStatus.FAILED, error_code="corrupt_file")
    passage = Passage.objects.get(resource=resource)
    session, _ = conversation(
        tenant.workspace, external_user_id="alice", title=f"{tenant.organization.name} chat"
    )
    return {
        "workspace_id": tenant.workspace.id,
        "resource_id": resource.id,
        "session_id": session.id,
        "passage_id": passage.id,
    }


def test_admin_lists_show_limited_staff_only_their_organization(
    owner: Tenant, outsider: Tenant, curator: Staff
) -> None:
    grant_all_views(curator.user)
    for tenant in (owner, outsider):
        tenant.workspace.name = f"{tenant.organization.name} desk"
        tenant.workspace.save()
        _objects(tenant)
    # Every name of the outsider's starts with "Outsider": organization,
    # workspace, resource, session.
    for url, mine in {
        "/admin/workspaces/organization/": "Owner",
        "/admin/workspaces/workspace/": "Owner desk",
        "/admin/workspaces/apikey/": "Owner",
        "/admin/resources/resource/": "Owner guide",
        "/admin/chat/session/": "Owner chat",
        "/admin/chat/message/": "Owner chat",
        "/admin/retrieval/passage/": "Owner guide",
    }.items():
        response = curator.client.get(url)
        assert response.status_code == 200, url
        text = response.content.decode()
        assert mine in text, url
        # Neither in the rows nor in the filters' choices.
        assert "Outsider" not in text, url


def test_admin_pages_of_another_organizations_objects_are_404(
    owner: Tenant, outsider: Tenant, curator: Staff
) -> None:
    grant_all_views(curator.user)
    foreign = _objects(outsider)
    for url in (
        f"/admin/workspaces/workspace/{outsider.workspace.id}/change/",
        f"/admin/workspaces/organization/{outsider.organization.id}/change/",
        f"/admin/resources/resource/{foreign['resource_id']}/change/",
        f"/admin/chat/session/{foreign['session_id']}/change/",
    ):
        assert curator.client.get(url).status_code == 404, url


def test_limited_staff_upload_only_to_their_workspaces(
    owner: Tenant, outsider: Tenant, curator: Staff
) -> None:
    form = curator.client.get("/admin/resources/resource/add/").content.decode()
    assert str(owner.workspace.id) in form and str(outsider.workspace.id) not in form
    response = curator.client.post(
        "/admin/resources/resource/add/",
        {"workspace": str(outsider.workspace.id), "file": SimpleUploadedFile("a.txt", b"Some text.")},
    )
    assert response.status_code == 200  # the form refuses the choice
    assert not Resource.objects.filter(workspace=outsider.workspace).exists()
    assert curator.client.get("/admin/workspaces/organization/add/").status_code == 403


def test_only_superusers_manage_memberships(owner: Tenant, curator: Staff, root: Staff) -> None:
    url = f"/admin/workspaces/staffmembership/{curator.user.staff_membership.pk}/change/"
    assert curator.client.get(url).status_code == 403
    assert curator.client.get("/admin/workspaces/staffmembership/").status_code == 403
    assert root.client.get(url).status_code == 200
    # Superusers are never offered as members: they are never limited.
    form = root.client.get("/admin/workspaces/staffmembership/add/").content.decode()
    assert f'<option value="{curator.user.pk}"' in form
    assert f'<option value="{root.user.pk}"' not in form


def grant_all_views(user: User) -> None:
    grant(
        user,
        [
            ("workspaces", "view_apikey"),
            ("chat", "view_message"),
            ("chat", "view_feedback"),
        ],
    )


def test_staff_without_a_membership_see_no_rows(owner: Tenant, outsider: Tenant) -> None:
    staff = make_staff("staff")
    grant_all_views(staff.user)
    listing = staff.client.get("/admin/workspaces/workspace/").content.decode()
    assert owner.workspace.name not in listing and outsider.workspace.name not in listing


def test_an_account_whose_organization_was_deleted_sees_no_rows(
    owner: Tenant, outsider: Tenant, curator: Staff
) -> None:
    grant_all_views(curator.user)
    owner.organization.delete()
    assert StaffMembership.objects.get(user=curator.user).organization is None
    listing = curator.client.get("/admin/workspaces/workspace/").content.decode()
    assert outsider.workspace.name not in listing
    assert (
        curator.client.get(f"/admin/workspaces/workspace/{outsider.workspace.id}/change/").status_code == 404
    )
