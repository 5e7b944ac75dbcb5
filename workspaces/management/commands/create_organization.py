from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from workspaces import services


class Command(BaseCommand):
    help = "Create an organization (a tenant)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--json", action="store_true", help="print JSON for scripts")

    def handle(self, *args: Any, **options: Any) -> None:
        organization = services.organization_create(name=options["name"])
        if options["json"]:
            self.stdout.write(json.dumps({"id": str(organization.id), "name": organization.name}))
        else:
            self.stdout.write(f"Organization {organization.name}: {organization.id}")
