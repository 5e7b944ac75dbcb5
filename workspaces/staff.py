"""Which organizations a staff account of the admin console may see.

The console's tenant boundary, as ``workspaces.access`` is the API's:

- a superuser sees every organization;
- a staff account with a :class:`~workspaces.models.StaffMembership` sees
  only that organization (nothing when the organization was deleted);
- a staff account without one sees nothing: the boundary fails closed, so
  an account created and never given a membership shows no tenant's data;
- anyone else (inactive, not staff, anonymous) sees nothing.

Every console page and every admin list of tenant data filters with
:func:`staff_scope`; an object outside the scope is a 404, exactly like a
missing one.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet

from daneshyar.api import uuid_or_404
from daneshyar.exceptions import NotFound
from workspaces.models import StaffMembership, Workspace

# The scope is read once per request: admin pages ask for it many times.
_CACHE_ATTRIBUTE = "_daneshyar_staff_scope"


@dataclass(frozen=True)
class StaffScope:
    """Every organization (``everything``), one, or none."""

    everything: bool
    organization_id: uuid.UUID | None = None

    @property
    def limited(self) -> bool:
        return not self.everything

    def allows(self, organization_id: uuid.UUID) -> bool:
        return self.everything or organization_id == self.organization_id

    def q(self, organization_path: str) -> Q:
        """A filter keeping the rows whose organization, reached by
        ``organization_path`` (``"organization"``, ``"workspace__organization"``,
        ``"pk"`` for organizations themselves), is in scope."""
        if self.everything:
            return Q()
        if self.organization_id is None:
            return Q(pk__in=[])
        return Q(**{organization_path: self.organization_id})


EVERYTHING = StaffScope(everything=True)
NOTHING = StaffScope(everything=False)


def staff_scope(user: Any) -> StaffScope:
    """The organizations ``user`` (a ``request.user``) may see in the console."""
    cached = getattr(user, _CACHE_ATTRIBUTE, None)
    if isinstance(cached, StaffScope):
        return cached
    scope = _scope(user)
    if getattr(user, "pk", None) is not None:
        setattr(user, _CACHE_ATTRIBUTE, scope)
    return scope


def _scope(user: Any) -> StaffScope:
    if not (getattr(user, "is_active", False) and getattr(user, "is_staff", False)):
        return NOTHING
    if getattr(user, "is_superuser", False):
        return EVERYTHING
    memberships = list(
        StaffMembership.objects.filter(user_id=user.pk).values_list("organization_id", flat=True)
    )
    if not memberships:
        return NOTHING
    return StaffScope(everything=False, organization_id=memberships[0])


def staff_workspace_list(*, user: Any) -> QuerySet[Workspace]:
    """The workspaces ``user`` may see, with their organization."""
    return Workspace.objects.filter(staff_scope(user).q("organization")).select_related("organization")


def staff_workspace_get(*, user: Any, workspace_id: uuid.UUID | str) -> Workspace:
    """The workspace if ``user`` may see it; otherwise 404 as if it did not exist."""
    workspace_uuid = uuid_or_404(workspace_id)
    try:
        return staff_workspace_list(user=user).get(id=workspace_uuid)
    except Workspace.DoesNotExist:
        raise NotFound() from None
