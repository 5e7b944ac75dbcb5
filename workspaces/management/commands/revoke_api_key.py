from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from workspaces import services
from workspaces.keys import display_prefix
from workspaces.models import ApiKey


class Command(BaseCommand):
    help = "Revoke an API key, by id or by its display prefix (dk_live_xxxxxx)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("key", help="the key's id or display prefix")

    def handle(self, *args: Any, **options: Any) -> None:
        ident: str = options["key"]
        try:
            if ident.startswith("dk_live_"):
                matches = list(ApiKey.objects.filter(prefix=display_prefix(ident)))
            else:
                matches = list(ApiKey.objects.filter(pk=ident))
        except ValidationError:
            matches = []
        if not matches:
            raise CommandError(f"No API key {ident}")
        if len(matches) > 1:
            raise CommandError(f"{len(matches)} keys share the prefix {ident}; revoke by id")
        api_key = services.api_key_revoke(api_key=matches[0])
        self.stdout.write(
            f"Revoked {api_key.prefix}… ({api_key.name}) at {api_key.revoked_at:%Y-%m-%d %H:%M:%S}"
        )
