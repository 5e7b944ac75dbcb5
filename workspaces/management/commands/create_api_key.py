from __future__ import annotations

import json
import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from daneshyar.exceptions import ApplicationError
from workspaces import services
from workspaces.management.organizations import organization_named
from workspaces.models import ApiKeyScope


class Command(BaseCommand):
    help = "Issue an API key. The plaintext is printed once and never stored."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("organization_id")
        parser.add_argument("--name", default="API key")
        parser.add_argument("--scope", choices=ApiKeyScope.values, default=ApiKeyScope.CHAT)
        parser.add_argument(
            "--workspace", action="append", default=[], help="limit the key to this workspace (repeatable)"
        )
        parser.add_argument("--json", action="store_true", help="print JSON for scripts")

    def handle(self, *args: Any, **options: Any) -> None:
        organization = organization_named(options["organization_id"])
        try:
            workspace_ids = [uuid.UUID(w) for w in options["workspace"]]
            issued = services.api_key_create(
                organization=organization,
                name=options["name"],
                scope=options["scope"],
                workspace_ids=workspace_ids,
            )
        except ValueError as exc:
            raise CommandError(f"Invalid workspace id: {exc}") from None
        except ApplicationError as exc:
            raise CommandError(f"{exc.message} {exc.fields or ''}") from None
        key = issued.api_key
        if options["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "id": str(key.id),
                        "key": issued.plaintext,
                        "prefix": key.prefix,
                        "scope": key.scope,
                        "organization_id": str(organization.id),
                        "workspace_ids": [str(w) for w in key.allowed_workspace_ids],
                    }
                )
            )
        else:
            self.stdout.write(f"API key {key.name} ({key.scope}), id {key.id}")
            self.stdout.write(f"  {issued.plaintext}")
            self.stdout.write("Store it now: it is not shown again.")
