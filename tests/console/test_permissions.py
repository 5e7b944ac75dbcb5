"""What a staff account may do inside the organization it sees: an account
limited to its own organization cannot raise the limits the operator set on
it, nobody un-revokes a key, a view-only account runs no action, an account
without a membership sees nothing, and the admin login locks out a guesser."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from pytest_django import Settings

from chat.models import Message, MessageRole
from tests.conftest import Tenant
from tests.staff import PASSWORD, Staff, grant, make_staff
from tests.transcripts.factories import conversation
from workspaces.models import ApiKey, Organization, Workspace

pytestmark = pytest.mark.django_db


def _change(staff: Staff, path: str, data: dict[str, object]) -> int:
    response = staff.client.post(path, data)
    return response.status_code


def test_limited_curator_cannot_raise_its_own_organizations_rate_limits(owner: Tenant) -> None:
    curator = make_staff("curator", organization=owner.organization)
    grant(curator.user, [("workspaces", "change_organization"), ("workspaces", "change_workspace")])
    Organization.objects.filter(pk=owner.organization.pk).update(rate_requests_per_minute=60)

    status = _change(
        curator,
        f"/admin/workspaces/organization/{owner.organization.pk}/change/",
        {"name": "Renamed", "rate_requests_per_minute": "1000000", "rate_chat_per_minute": "1000000"},
    )
    assert status == 302
    organization = Organization.objects.get(pk=owner.organization.pk)
    assert organization.name == "Renamed"  # what the tenant may change
    assert (organization.rate_requests_per_minute, organization.rate_chat_per_minute) == (60, None)

    page = curator.client.get(f"/admin/workspaces/workspace/{owner.workspace.pk}/change/").content.decode()
    assert 'name="rate_chat_per_minute"' not in page
    curator.client.post(
        f"/admin/workspaces/workspace/{owner.workspace.pk}/change/",
        {"rate_chat_per_minute": "1000000", "rate_uploads_per_minute": "1000000"},
    )
    workspace = Workspace.objects.get(pk=owner.workspace.pk)
    assert (workspace.rate_chat_per_minute, workspace.rate_uploads_per_minute) == (None, None)


def test_superuser_still_sets_an_organizations_rate_limits(owner: Tenant) -> None:
    root = make_staff("root", superuser=True)
    status = _change(
        root,
        f"/admin/workspaces/organization/{owner.organization.pk}/change/",
        {"name": owner.organization.name, "rate_requests_per_minute": "5000"},
    )
    assert status == 302
    assert Organization.objects.get(pk=owner.organization.pk).rate_requests_per_minute == 5000


@pytest.mark.parametrize("superuser", [False, True])
def test_a_revoked_key_cannot_be_unrevoked_on_its_change_form(owner: Tenant, superuser: bool) -> None:
    if superuser:
        staff = make_staff("root", superuser=True)
    else:
        staff = make_staff("curator", organization=owner.organization)
        grant(staff.user, [("workspaces", "view_apikey"), ("workspaces", "change_apikey")])
    key = ApiKey.objects.filter(organization=owner.organization).first()
    assert key is not None
    revoked_at = timezone.now()
    ApiKey.objects.filter(pk=key.pk).update(revoked_at=revoked_at)

    response = staff.client.post(
        f"/admin/workspaces/apikey/{key.pk}/change/",
        {"name": key.name, "revoked_at_0": "", "revoked_at_1": ""},
    )
    assert response.status_code == 200  # the form again, with the refusal
    assert "A revoked key stays revoked" in response.content.decode()
    key.refresh_from_db()
    assert key.revoked_at == revoked_at


def test_view_only_staff_cannot_revoke_keys_with_the_action(owner: Tenant) -> None:
    viewer = make_staff("viewer", organization=owner.organization, permissions=False)
    grant(viewer.user, [("workspaces", "view_apikey")])
    key = ApiKey.objects.filter(organization=owner.organization).first()
    assert key is not None
    listing = viewer.client.get("/admin/workspaces/apikey/")
    assert listing.status_code == 200 and b"revoke_keys" not in listing.content
    viewer.client.post(
        "/admin/workspaces/apikey/", {"action": "revoke_keys", "_selected_action": [str(key.pk)]}
    )
    key.refresh_from_db()
    assert key.revoked_at is None

    editor = make_staff("editor", organization=owner.organization, permissions=False)
    grant(editor.user, [("workspaces", "view_apikey"), ("workspaces", "change_apikey")])
    editor.client.post(
        "/admin/workspaces/apikey/", {"action": "revoke_keys", "_selected_action": [str(key.pk)]}
    )
    key.refresh_from_db()
    assert key.revoked_at is not None


def _caught_reply(tenant: Tenant) -> Message:
    _, messages = conversation(tenant.workspace)
    reply = next(m for m in messages if m.role == MessageRole.ASSISTANT)
    Message.objects.filter(pk=reply.pk).update(
        guard={"action": "flag", "rule_ids": ["r1"]}, review_status="pending"
    )
    return reply


def test_view_only_staff_cannot_mark_replies_reviewed(owner: Tenant) -> None:
    reply = _caught_reply(owner)
    viewer = make_staff("viewer", organization=owner.organization, permissions=False)
    grant(viewer.user, [("chat", "view_reviewitem")])
    page = viewer.client.get(f"/admin/chat/reviewitem/{reply.pk}/change/")
    assert page.status_code == 200 and b"_mark_reviewed" not in page.content
    assert (
        viewer.client.post(f"/admin/chat/reviewitem/{reply.pk}/change/", {"_mark_reviewed": "1"}).status_code
        == 403
    )
    viewer.client.post(
        "/admin/chat/reviewitem/", {"action": "mark_reviewed", "_selected_action": [str(reply.pk)]}
    )
    reply.refresh_from_db()
    assert reply.review_status == "pending"

    reviewer = make_staff("reviewer", organization=owner.organization, permissions=False)
    grant(reviewer.user, [("chat", "view_reviewitem"), ("chat", "change_reviewitem")])
    reviewer.client.post(
        "/admin/chat/reviewitem/", {"action": "mark_reviewed", "_selected_action": [str(reply.pk)]}
    )
    reply.refresh_from_db()
    assert reply.review_status == "reviewed" and reply.reviewed_by == "reviewer"


def test_staff_without_a_membership_see_nothing(owner: Tenant, outsider: Tenant) -> None:
    """An account made staff and never given an organization fails closed."""
    staff = make_staff("staff")
    grant(staff.user, [("workspaces", "view_apikey"), ("chat", "view_message")])
    index = staff.client.get("/admin/console/").content.decode()
    for tenant in (owner, outsider):
        assert str(tenant.workspace.id) not in index
        assert staff.client.get(f"/admin/console/{tenant.workspace.id}/dashboard/").status_code == 404
        assert (
            staff.client.get(f"/admin/workspaces/workspace/{tenant.workspace.id}/change/").status_code == 404
        )
    listing = staff.client.get("/admin/workspaces/workspace/").content.decode()
    assert owner.workspace.name not in listing and outsider.workspace.name not in listing
    assert staff.client.get("/admin/workspaces/apikey/").context["cl"].result_count == 0


def _login(client: Client, username: str, password: str) -> int:
    response = client.post("/admin/login/?next=/admin/", {"username": username, "password": password})
    return response.status_code


def test_admin_login_locks_out_a_username_and_address_after_failures(settings: Settings) -> None:
    settings.AXES_FAILURE_LIMIT = 3
    User.objects.create_superuser("root", "root@example.org", PASSWORD)
    User.objects.create_superuser("other", "other@example.org", PASSWORD)
    guesser = Client(REMOTE_ADDR="203.0.113.7")
    assert [_login(guesser, "root", f"wrong-{i}") for i in range(3)] == [200, 200, 429]
    # Locked out: even the right password is refused from there.
    assert _login(guesser, "root", PASSWORD) == 429
    # Another account from that address, and the account from elsewhere, still sign in.
    assert _login(guesser, "other", PASSWORD) == 302
    assert _login(Client(REMOTE_ADDR="198.51.100.2"), "root", PASSWORD) == 302


@pytest.mark.parametrize(
    "chain",
    [
        # compose's nginx: the peer it saw, appended.
        ("127.0.0.1", ""),
        # make run's proxy, over gunicorn's Unix socket (no REMOTE_ADDR).
        ("", ""),
        # A TLS proxy in front of nginx: nginx appends the TLS proxy's address.
        ("172.18.0.5", ", 10.0.0.9"),
    ],
)
def test_behind_our_proxies_the_lockout_follows_the_address_they_saw(
    settings: Settings, chain: tuple[str, str]
) -> None:
    """The proxies append the client's address to X-Forwarded-For; the hops
    before it are the client's to write, so changing them does not escape."""
    settings.AXES_FAILURE_LIMIT = 2
    User.objects.create_superuser("root", "root@example.org", PASSWORD)
    peer, internal_hops = chain
    guesser = [
        Client(REMOTE_ADDR=peer, HTTP_X_FORWARDED_FOR=f"81.2.69.{i}, 81.2.69.142{internal_hops}")
        for i in range(3)
    ]
    assert [_login(client, "root", "wrong") for client in guesser] == [200, 429, 429]
    elsewhere = Client(REMOTE_ADDR=peer, HTTP_X_FORWARDED_FOR=f"81.2.69.160{internal_hops}")
    assert _login(elsewhere, "root", PASSWORD) == 302


def test_a_forwarded_for_header_sent_straight_to_the_server_is_ignored(settings: Settings) -> None:
    settings.AXES_FAILURE_LIMIT = 2
    User.objects.create_superuser("root", "root@example.org", PASSWORD)
    direct = [Client(REMOTE_ADDR="81.2.69.142", HTTP_X_FORWARDED_FOR=f"81.2.69.{i}") for i in range(3)]
    assert [_login(client, "root", "wrong") for client in direct] == [200, 429, 429]
