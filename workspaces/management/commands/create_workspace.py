from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from workspaces import services
from workspaces.management.organizations import organization_named


class Command(BaseCommand):
    help = "Create a workspace in an organization."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("organization_id")
        parser.add_argument("name")
        parser.add_argument("--system-prompt", default="")
        parser.add_argument("--json", action="store_true", help="print JSON for scripts")

    def handle(self, *args: Any, **options: Any) -> None:
        organization = organization_named(options["organization_id"])
        workspace = services.workspace_create(
            organization=organization, name=options["name"], system_prompt=options["system_prompt"]
        )
        if options["json"]:
            self.stdout.write(json.dumps({"id": str(workspace.id), "name": workspace.name}))
        else:
            self.stdout.write(f"Workspace {workspace.name}: {workspace.id}")
