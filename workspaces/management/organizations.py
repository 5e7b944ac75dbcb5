"""What the management commands share: the organization a command names."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from workspaces.models import Organization


def organization_named(organization_id: str) -> Organization:
    """The organization of ``organization_id``; a CommandError when there is none
    (or the id is not one)."""
    try:
        return Organization.objects.get(pk=organization_id)
    except (Organization.DoesNotExist, ValidationError):
        raise CommandError(f"No organization {organization_id}") from None
