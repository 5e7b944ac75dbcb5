from __future__ import annotations

import io
import json
import re

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from tests.conftest import Tenant, api_client
from workspaces.keys import hash_key
from workspaces.models import ApiKey, Organization, Workspace

pytestmark = pytest.mark.django_db


def test_staff_user_logs_in_and_creates_a_key_shown_once(owner: Tenant) -> None:
    User.objects.create_superuser("curator", "curator@example.com", "a-strong-pass-123")
    browser = Client()
    login_page = browser.get("/admin/login/")
    assert login_page.status_code == 200
    logged_in = browser.post(
        "/admin/login/?next=/admin/",
        {"username": "curator", "password": "a-strong-pass-123", "next": "/admin/"},
        follow=True,
    )
    assert logged_in.status_code == 200
    assert b"Site administration" in logged_in.content

    response = browser.post(
        "/admin/workspaces/apikey/add/",
        {
            "organization": str(owner.organization.id),
            "name": "from the console",
            "scope": "chat",
            "workspaces": [str(owner.workspace.id)],
        },
    )
    assert response.status_code == 200
    match = re.search(rb'id="api-key-plaintext"[^>]*>(dk_live_[A-Za-z0-9_-]+)<', response.content)
    assert match, response.content[:2000]
    plaintext = match.group(1).decode()
    key = ApiKey.objects.get(name="from the console")
    assert key.key_hash == hash_key(plaintext)
    assert key.allowed_workspace_ids == [owner.workspace.id]
    # The key works, and the change page never shows the plaintext again.
    assert api_client(plaintext).get("/api/v1/models/").status_code == 200
    change = browser.get(f"/admin/workspaces/apikey/{key.pk}/change/")
    assert change.status_code == 200
    assert plaintext.encode() not in change.content
    listing = browser.get("/admin/workspaces/apikey/?q=console")
    assert b"from the console" in listing.content


def test_management_commands_create_org_workspace_and_keys_and_revoke() -> None:
    out = io.StringIO()
    call_command("create_organization", "Clinic", "--json", stdout=out)
    org = json.loads(out.getvalue())
    assert Organization.objects.filter(pk=org["id"]).exists()

    out = io.StringIO()
    call_command("create_workspace", org["id"], "Front desk", "--json", stdout=out)
    workspace = json.loads(out.getvalue())
    assert Workspace.objects.get(pk=workspace["id"]).organization_id.hex == org["id"].replace("-", "")

    out = io.StringIO()
    call_command(
        "create_api_key", org["id"], "--scope", "admin", "--workspace", workspace["id"], "--json", stdout=out
    )
    issued = json.loads(out.getvalue())
    assert issued["key"].startswith("dk_live_") and issued["workspace_ids"] == [workspace["id"]]
    client = api_client(issued["key"])
    assert client.get(f"/api/v1/workspaces/{workspace['id']}/").status_code == 200

    call_command("revoke_api_key", issued["prefix"], stdout=io.StringIO())
    assert client.get(f"/api/v1/workspaces/{workspace['id']}/").status_code == 401

    with pytest.raises(CommandError):
        call_command("create_api_key", "not-a-uuid", stdout=io.StringIO())
