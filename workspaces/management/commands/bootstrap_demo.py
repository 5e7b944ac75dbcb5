from __future__ import annotations

import json
import secrets
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandParser

from workspaces import services
from workspaces.keys import hash_key
from workspaces.models import ApiKey, ApiKeyScope, Organization, Workspace

DEMO_ORGANIZATION = "Demo organization"
DEMO_WORKSPACE = "Demo workspace"


class Command(BaseCommand):
    help = (
        "Local runs only: make sure a demo organization, workspace, admin API key and "
        "console user exist, and print how to use them."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        # The demo credentials are kept (0600) in the local data directory so
        # that every start of the local service can print them again.
        state_path = Path(settings.DATA_DIR) / "demo.json"
        state: dict[str, str] = json.loads(state_path.read_text()) if state_path.exists() else {}

        organization = Organization.objects.filter(
            pk=state.get("organization_id") or uuid.UUID(int=0)
        ).first()
        if organization is None:
            organization = services.organization_create(name=DEMO_ORGANIZATION)
        workspace = Workspace.objects.filter(
            pk=state.get("workspace_id") or uuid.UUID(int=0), organization=organization
        ).first()
        if workspace is None:
            workspace = services.workspace_create(organization=organization, name=DEMO_WORKSPACE)
        key = state.get("api_key", "")
        if not key or not ApiKey.objects.active().filter(key_hash=hash_key(key)).exists():
            key = services.api_key_create(
                organization=organization, name="demo admin key", scope=ApiKeyScope.ADMIN
            ).plaintext
        password = state.get("admin_password") or secrets.token_urlsafe(12)
        user = User.objects.filter(username="admin").first()
        if user is None:
            User.objects.create_superuser("admin", "admin@localhost", password)
        elif not user.check_password(password):
            password = "(unchanged: set with manage.py changepassword admin)"  # noqa: S105

        state = {
            "organization_id": str(organization.id),
            "workspace_id": str(workspace.id),
            "api_key": key,
            "admin_password": password,
        }
        state_path.parent.mkdir(parents=True, exist_ok=True)
        state_path.touch(mode=0o600)
        state_path.write_text(json.dumps(state))
        self.stdout.write(json.dumps(state) if options["json"] else self._describe(state))

    def _describe(self, state: dict[str, str]) -> str:
        return (
            f"  organization  {state['organization_id']}\n"
            f"  workspace     {state['workspace_id']}\n"
            f"  API key       {state['api_key']}  (admin scope)\n"
            f"  console user  admin / {state['admin_password']}"
        )
