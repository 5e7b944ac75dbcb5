"""Who sees what in the console: superusers see every organization; a staff
account limited to one organization sees only its workspaces, everywhere in
the console and the admin, and another organization's workspace, playground,
transcripts, resources and passages are 404s, exactly like missing ones;
a staff account without a membership sees nothing."""

from __future__ import annotations

import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLPattern

from console import urls as console_urls
from evaluations import items, runs
from resources.models import Resource, ResourceStatus
from resources.sources.services import SourceFields, source_create
from retrieval.models import Passage
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant
from tests.staff import Staff, make_staff
from tests.transcripts.factories import conversation
from workspaces.models import StaffMembership, WebhookDelivery, WebhookEvent
from workspaces.webhooks.events import webhook_event_emit
from workspaces.webhooks.services import webhook_create

pytestmark = pytest.mark.django_db


def _objects(tenant: Tenant) -> dict[str, uuid.UUID]:
    """One object of each kind a console route names, in ``tenant``'s workspace."""
    resource = ingest_text(
        tenant.workspace, f"{tenant.organization.name} guide", "Opening hours are nine to five."
    )
    Resource.objects.filter(pk=resource.pk).update(status=ResourceStatus.FAILED, error_code="corrupt_file")
    passage = Passage.objects.get(resource=resource)
    session, messages = conversation(
        tenant.workspace, external_user_id="alice", title=f"{tenant.organization.name} chat"
    )
    test_set = items.test_set_create(workspace=tenant.workspace, name="Set")
    item = items.item_create(test_set=test_set, data={"question": "Opening hours?"})
    return {
        "workspace_id": tenant.workspace.id,
        "resource_id": resource.id,
        "session_id": session.id,
        "passage_id": passage.id,
        "test_set_id": test_set.id,
        "item_id": item.id,
        "run_id": runs.run_create(test_set=test_set).id,
        "message_id": messages[1].id,
        **_source_and_delivery(tenant),
    }


def _source_and_delivery(tenant: Tenant) -> dict[str, uuid.UUID]:
    """A web source and a webhook delivery of ``tenant``'s workspace."""
    fields = SourceFields(kind="page", urls=["https://docs.example.org/"])
    source = source_create(workspace=tenant.workspace, fields=fields)
    webhook_create(workspace=tenant.workspace, url="https://hooks.example.org/")
    webhook_event_emit(
        workspace_id=tenant.workspace.id, event_type=WebhookEvent.RESOURCE_READY, subject_id="r", data={}
    )
    delivery = WebhookDelivery.objects.filter(endpoint__workspace=tenant.workspace).first()
    assert delivery is not None
    return {"source_id": source.id, "delivery_id": delivery.id}


def _routes() -> list[tuple[str, URLPattern]]:
    return [(str(p.pattern), p) for p in console_urls.urlpatterns if isinstance(p, URLPattern)]


def _url(pattern: URLPattern, values: dict[str, uuid.UUID]) -> str:
    path = str(pattern.pattern)
    for name, value in values.items():
        path = path.replace(f"<uuid:{name}>", str(value))
    path = path.replace("<int:page>", "1")  # a page of the resource
    assert "<" not in path, path
    return f"/admin/console/{path}"


def test_every_console_route_but_the_index_names_a_workspace() -> None:
    for path, _ in _routes():
        assert path == "" or path.startswith("<uuid:workspace_id>/"), path


def test_limited_staff_get_404_on_every_route_of_another_organization(
    owner: Tenant, outsider: Tenant, curator: Staff
) -> None:
    foreign = _objects(outsider)
    for path, pattern in _routes():
        if not path:
            continue
        url = _url(pattern, foreign)
        for method in ("get", "post"):
            response = getattr(curator.client, method)(url)
            # 405 would tell the route exists for this workspace: only GET-only
            # or POST-only routes answer it, and they do so for every workspace.
            assert response.status_code in (404, 405), (method, url, response.status_code)
            if response.status_code == 404:
                assert response.json()["error"]["code"] == "not_found"
        assert curator.client.get(url).status_code in (404, 405)
    # Every route that answers GET at all answers it with 404 here.
    assert curator.client.get(f"/admin/console/{outsider.workspace.id}/dashboard/").status_code == 404
    assert curator.client.get(f"/admin/console/{outsider.workspace.id}/playground/").status_code == 404
    assert curator.client.get(f"/admin/console/{outsider.workspace.id}/transcripts/").status_code == 404


def test_limited_staff_get_404_for_another_organizations_objects_under_their_own_workspace(
    owner: Tenant, outsider: Tenant, curator: Staff
) -> None:
    foreign = _objects(outsider)
    own = owner.workspace.id
    assert curator.client.get(f"/admin/console/{own}/transcripts/{foreign['session_id']}/").status_code == 404
    assert curator.client.get(f"/admin/console/{own}/passages/{foreign['passage_id']}/").status_code == 404
    response = curator.client.post(f"/admin/console/{own}/ingestion/{foreign['resource_id']}/retry/")
    assert response.status_code == 404
    assert Resource.objects.get(pk=foreign["resource_id"]).status == ResourceStatus.FAILED


def test_limited_staff_use_their_own_workspace(owner: Tenant, curator: Staff) -> None:
    mine = _objects(owner)
    base = f"/admin/console/{owner.workspace.id}"
    for page in ("dashboard/", "playground/", "ingestion/", "ingestion/status/", "transcripts/"):
        assert curator.client.get(f"{base}/{page}").status_code == 200, page
    assert curator.client.get(f"{base}/transcripts/{mine['session_id']}/").status_code == 200
    assert curator.client.get(f"{base}/passages/{mine['passage_id']}/").status_code == 200


def test_a_missing_workspace_looks_like_another_organizations(curator: Staff) -> None:
    response = curator.client.get(f"/admin/console/{uuid.uuid4()}/dashboard/")
    assert response.status_code == 404


def test_staff_without_permissions_get_403_on_their_workspace_and_404_elsewhere(
    owner: Tenant, outsider: Tenant
) -> None:
    bare = make_staff("bare", organization=owner.organization, permissions=False)
    assert bare.client.get(f"/admin/console/{owner.workspace.id}/dashboard/").status_code == 403
    assert bare.client.get(f"/admin/console/{outsider.workspace.id}/dashboard/").status_code == 404
    response = bare.client.post(
        f"/admin/console/{owner.workspace.id}/ingestion/upload/",
        {"files": [SimpleUploadedFile("a.txt", b"Some text.")]},
    )
    assert response.status_code == 403
    assert not Resource.objects.exists()


def test_anonymous_visitors_are_sent_to_the_login(owner: Tenant) -> None:
    response = Client().get(f"/admin/console/{owner.workspace.id}/dashboard/")
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    response = Client().get("/admin/console/")
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")


def test_the_console_index_lists_only_the_accounts_workspaces(
    owner: Tenant, outsider: Tenant, curator: Staff, root: Staff
) -> None:
    limited = curator.client.get("/admin/console/").content.decode()
    assert str(owner.workspace.id) in limited and str(outsider.workspace.id) not in limited
    everything = root.client.get("/admin/console/").content.decode()
    assert str(owner.workspace.id) in everything and str(outsider.workspace.id) in everything
    # The admin's index leads to the console.
    assert b'href="/admin/console/"' in root.client.get("/admin/").content


def test_staff_without_a_membership_see_no_organization(owner: Tenant, outsider: Tenant) -> None:
    staff = make_staff("staff")
    for tenant in (owner, outsider):
        assert staff.client.get(f"/admin/console/{tenant.workspace.id}/dashboard/").status_code == 404
    listing = staff.client.get("/admin/workspaces/workspace/").content.decode()
    assert owner.workspace.name not in listing and outsider.workspace.name not in listing


def test_an_account_whose_organization_was_deleted_sees_nothing(
    owner: Tenant, outsider: Tenant, curator: Staff
) -> None:
    workspace_id = owner.workspace.id
    owner.organization.delete()
    membership = StaffMembership.objects.get(user=curator.user)
    assert membership.organization is None
    assert str(outsider.workspace.id) not in curator.client.get("/admin/console/").content.decode()
    assert curator.client.get(f"/admin/console/{outsider.workspace.id}/dashboard/").status_code == 404
    assert curator.client.get(f"/admin/console/{workspace_id}/dashboard/").status_code == 404
