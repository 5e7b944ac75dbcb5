"""Who a request acts for: an integrator's API key, or one end user of one
workspace vouched for by an end-user token.

``request.auth`` is one of the two. Code that grants power checks for an
:class:`~workspaces.models.ApiKey` (``HasApiKey``, ``is_admin``); an
:class:`EndUser` is never admin, sees one workspace and acts as one
``external_user_id``, so an end-user token cannot reach an integrator's
powers by a path that forgot about it.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import ClassVar

from workspaces.models import ApiKey, Organization, Workspace


@dataclass(frozen=True)
class EndUser:
    """The bearer of a valid end-user token (workspaces/tokens.py)."""

    workspace: Workspace
    external_user_id: str
    # Retrieval for this user's turns only from these resources (empty: all).
    resource_ids: tuple[uuid.UUID, ...]
    token_id: str
    expires_at: dt.datetime
    # The user's groups (the token's ``groups`` claim; empty: none): this
    # user reads only documents open to all or to one of them.
    groups: tuple[str, ...] = ()

    # DRF stores the principal as ``request.user`` as well.
    is_authenticated: ClassVar[bool] = True
    is_admin: ClassVar[bool] = False

    @property
    def organization(self) -> Organization:
        # The organization a token request counts against (rate limits).
        return self.workspace.organization

    @property
    def rate_identity(self) -> str:
        """Stands for "the key" in the per-key rate-limit buckets: the end-user
        tokens of one workspace share them."""
        return f"end-user-tokens:{self.workspace.id}"

    def allows_workspace(self, workspace_id: uuid.UUID) -> bool:
        return workspace_id == self.workspace.id


Principal = ApiKey | EndUser


def rate_identity(principal: Principal) -> str:
    return principal.rate_identity if isinstance(principal, EndUser) else str(principal.id)
