"""The tenancy management commands: what they print, what they refuse, and
that what they issue works against the API."""

from __future__ import annotations

import io
import json
import stat
import uuid
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from pytest_django.fixtures import Settings

from tests.conftest import Tenant, api_client
from workspaces import services
from workspaces.keys import hash_key
from workspaces.models import ApiKey, ApiKeyScope, Organization, Workspace

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_organization_prints_its_name_and_id() -> None:
    text = run("create_organization", "Clinic")
    organization = Organization.objects.get(name="Clinic")
    assert text.strip() == f"Organization Clinic: {organization.id}"


def test_create_workspace_sets_the_system_prompt(owner: Tenant) -> None:
    text = run(
        "create_workspace", str(owner.organization.id), "Front desk", "--system-prompt", "Answer briefly."
    )
    workspace = Workspace.objects.get(name="Front desk")
    assert text.strip() == f"Workspace Front desk: {workspace.id}"
    assert workspace.organization == owner.organization
    assert workspace.system_prompt == "Answer briefly."
    # Created with the defaults the API documents.
    assert (workspace.top_k, workspace.widened_top_k, workspace.per_resource_k) == (5, 15, 3)


@pytest.mark.parametrize("command", ["create_workspace", "create_api_key"])
@pytest.mark.parametrize("organization_id", ["not-a-uuid", str(uuid.uuid4())])
def test_commands_refuse_an_unknown_organization(command: str, organization_id: str) -> None:
    args = [command, organization_id] + (["Desk"] if command == "create_workspace" else [])
    with pytest.raises(CommandError, match=f"No organization {organization_id}"):
        run(*args)
    assert not Workspace.objects.exists() and not ApiKey.objects.exists()


def test_create_api_key_defaults_to_a_chat_key_for_every_workspace(owner: Tenant) -> None:
    text = run("create_api_key", str(owner.organization.id))
    lines = text.splitlines()
    key = ApiKey.objects.exclude(name__in=["admin", "chat"]).get()
    assert lines[0] == f"API key API key (chat), id {key.id}"
    plaintext = lines[1].strip()
    assert key.key_hash == hash_key(plaintext)
    assert lines[2] == "Store it now: it is not shown again."
    assert key.scope == ApiKeyScope.CHAT and key.allowed_workspace_ids == []
    # A chat key: it works, but may not manage workspaces.
    client = api_client(plaintext)
    assert client.get("/api/v1/models/").status_code == 200
    assert client.get(f"/api/v1/workspaces/{owner.workspace.id}/").status_code == 403


def test_create_api_key_json_names_everything_a_script_needs(owner: Tenant) -> None:
    other = services.workspace_create(organization=owner.organization, name="Other")
    issued = json.loads(
        run(
            "create_api_key",
            str(owner.organization.id),
            "--name",
            "deploy bot",
            "--scope",
            "admin",
            "--workspace",
            str(owner.workspace.id),
            "--workspace",
            str(other.id),
            "--workspace",
            str(owner.workspace.id),
            "--json",
        )
    )
    assert set(issued) == {"id", "key", "prefix", "scope", "organization_id", "workspace_ids"}
    assert issued["scope"] == "admin"
    assert issued["organization_id"] == str(owner.organization.id)
    # A repeated workspace is listed once, in the order given.
    assert issued["workspace_ids"] == [str(owner.workspace.id), str(other.id)]
    assert issued["key"].startswith(issued["prefix"])
    assert ApiKey.objects.get(pk=issued["id"]).name == "deploy bot"


def test_create_api_key_refuses_a_malformed_workspace_id(owner: Tenant) -> None:
    with pytest.raises(CommandError, match="Invalid workspace id"):
        run("create_api_key", str(owner.organization.id), "--workspace", "desk-1")
    assert ApiKey.objects.count() == 2  # the tenant's own two


def test_create_api_key_refuses_another_organizations_workspace(owner: Tenant, outsider: Tenant) -> None:
    with pytest.raises(CommandError, match="Some workspaces do not belong to this organization") as caught:
        run("create_api_key", str(owner.organization.id), "--workspace", str(outsider.workspace.id))
    assert str(outsider.workspace.id) in str(caught.value)
    assert ApiKey.objects.filter(organization=owner.organization).count() == 2


def test_create_api_key_refuses_an_unknown_scope(owner: Tenant) -> None:
    with pytest.raises(CommandError, match="invalid choice"):
        run("create_api_key", str(owner.organization.id), "--scope", "root")


def test_revoke_api_key_by_id_stops_the_key_at_once(owner: Tenant) -> None:
    key = ApiKey.objects.get(organization=owner.organization, name="chat")
    client = owner.client("chat")
    assert client.get("/api/v1/models/").status_code == 200
    text = run("revoke_api_key", str(key.id))
    key.refresh_from_db()
    assert key.revoked_at is not None
    assert text.startswith(f"Revoked {key.prefix}… (chat) at {key.revoked_at:%Y-%m-%d}")
    assert client.get("/api/v1/models/").status_code == 401
    # The other key of the organization still works.
    assert owner.client("admin").get("/api/v1/models/").status_code == 200


def test_revoking_twice_keeps_the_first_time(owner: Tenant) -> None:
    key = ApiKey.objects.get(organization=owner.organization, name="chat")
    run("revoke_api_key", str(key.id))
    key.refresh_from_db()
    first = key.revoked_at
    run("revoke_api_key", str(key.id))
    key.refresh_from_db()
    assert key.revoked_at == first


def test_revoke_api_key_by_the_whole_plaintext_uses_its_prefix(owner: Tenant) -> None:
    run("revoke_api_key", owner.chat_key)
    assert owner.client("chat").get("/api/v1/models/").status_code == 401


@pytest.mark.parametrize("ident", ["dk_live_zzzzzz", str(uuid.uuid4()), "not-a-uuid"])
def test_revoke_api_key_refuses_what_names_no_key(owner: Tenant, ident: str) -> None:
    with pytest.raises(CommandError, match=f"No API key {ident}"):
        run("revoke_api_key", ident)
    assert not ApiKey.objects.filter(revoked_at__isnull=False).exists()


def test_revoke_api_key_refuses_a_prefix_shared_by_two_keys(owner: Tenant) -> None:
    keys = list(ApiKey.objects.filter(organization=owner.organization))
    ApiKey.objects.filter(pk__in=[k.pk for k in keys]).update(prefix="dk_live_shared")
    with pytest.raises(CommandError, match="2 keys share the prefix dk_live_shared; revoke by id"):
        run("revoke_api_key", "dk_live_shared")
    assert not ApiKey.objects.filter(revoked_at__isnull=False).exists()


# bootstrap_demo: the local service's demo tenant


@pytest.fixture
def data_dir(settings: Settings, tmp_path: Path) -> Path:
    settings.DATA_DIR = tmp_path
    return tmp_path


def test_bootstrap_demo_makes_a_working_tenant_and_keeps_it_private(data_dir: Path) -> None:
    state = json.loads(run("bootstrap_demo", "--json"))
    assert set(state) == {"organization_id", "workspace_id", "api_key", "admin_password"}
    workspace = Workspace.objects.get(pk=state["workspace_id"])
    assert str(workspace.organization_id) == state["organization_id"]
    client = api_client(state["api_key"])
    assert client.get(f"/api/v1/workspaces/{workspace.id}/").status_code == 200  # an admin key
    assert User.objects.get(username="admin").check_password(state["admin_password"])
    saved = data_dir / "demo.json"
    assert json.loads(saved.read_text()) == state
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600


def test_bootstrap_demo_run_again_reuses_everything(data_dir: Path) -> None:
    first = json.loads(run("bootstrap_demo", "--json"))
    second = json.loads(run("bootstrap_demo", "--json"))
    assert second == first
    assert Organization.objects.count() == 1 and Workspace.objects.count() == 1
    assert ApiKey.objects.count() == 1 and User.objects.count() == 1


def test_bootstrap_demo_replaces_what_was_removed(data_dir: Path) -> None:
    first = json.loads(run("bootstrap_demo", "--json"))
    services.api_key_revoke(api_key=ApiKey.objects.get())
    Workspace.objects.filter(pk=first["workspace_id"]).delete()
    second = json.loads(run("bootstrap_demo", "--json"))
    assert second["organization_id"] == first["organization_id"]
    assert second["workspace_id"] != first["workspace_id"]
    assert second["api_key"] != first["api_key"]
    assert (
        api_client(second["api_key"]).get(f"/api/v1/workspaces/{second['workspace_id']}/").status_code == 200
    )
    assert api_client(first["api_key"]).get("/api/v1/models/").status_code == 401


def test_bootstrap_demo_never_resets_a_changed_password(data_dir: Path) -> None:
    run("bootstrap_demo", "--json")
    user = User.objects.get(username="admin")
    user.set_password("chosen-by-the-operator-77")
    user.save()
    state = json.loads(run("bootstrap_demo", "--json"))
    assert state["admin_password"].startswith("(unchanged")
    user.refresh_from_db()
    assert user.check_password("chosen-by-the-operator-77")


def test_bootstrap_demo_describes_the_tenant_for_people(data_dir: Path) -> None:
    text = run("bootstrap_demo")
    state = json.loads((data_dir / "demo.json").read_text())
    assert f"organization  {state['organization_id']}" in text
    assert f"workspace     {state['workspace_id']}" in text
    assert f"API key       {state['api_key']}  (admin scope)" in text
    assert f"console user  admin / {state['admin_password']}" in text
