"""Staff accounts of the admin console: superusers, plain staff, and staff
limited to one organization (``StaffMembership``), logged in with a test client."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import Permission, User
from django.test import Client

from workspaces.models import Organization, StaffMembership

PASSWORD = "a-long-test-password-91"

# Everything the console's pages ask for (console/views/common.py).
CONSOLE_PERMISSIONS = [
    ("chat", "view_session"),
    ("chat", "add_session"),
    ("evaluations", "view_testset"),
    ("evaluations", "change_testset"),
    ("evaluations", "add_evaluationrun"),
    ("resources", "view_resource"),
    ("resources", "add_resource"),
    ("resources", "change_resource"),
    ("retrieval", "view_passage"),
    ("resources", "view_source"),
    ("resources", "view_sourcerun"),
    ("resources", "change_source"),
    ("workspaces", "view_webhookendpoint"),
    ("workspaces", "view_webhookdelivery"),
    ("workspaces", "change_webhookdelivery"),
    ("workspaces", "view_workspace"),
    ("workspaces", "view_organization"),
]


@dataclass
class Staff:
    user: User
    client: Client


def grant(user: User, permissions: list[tuple[str, str]] = CONSOLE_PERMISSIONS) -> None:
    for app_label, codename in permissions:
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )


def make_staff(
    username: str,
    *,
    organization: Organization | None = None,
    superuser: bool = False,
    permissions: bool = True,
) -> Staff:
    if superuser:
        user = User.objects.create_superuser(username, f"{username}@example.org", PASSWORD)
    else:
        user = User.objects.create_user(username, f"{username}@example.org", PASSWORD, is_staff=True)
        if permissions:
            grant(user)
        if organization is not None:
            StaffMembership.objects.create(user=user, organization=organization)
    client = Client()
    client.force_login(user)
    return Staff(user, client)
