from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from workspaces.models import ApiKey
from workspaces.principals import EndUser


class HasApiKey(BasePermission):
    """Any valid key (either scope)."""

    message = "An X-API-Key header with a valid key is required."

    def has_permission(self, request: Request, view: Any) -> bool:
        return isinstance(request.auth, ApiKey)


class HasApiKeyOrEndUser(HasApiKey):
    """A key, or an end-user token: the end-user routes (chat, sessions,
    feedback, models), whose views also list EndUserTokenAuthentication."""

    message = "An API key or an end-user token is required."

    def has_permission(self, request: Request, view: Any) -> bool:
        return isinstance(request.auth, ApiKey | EndUser)


class IsAdminKey(HasApiKey):
    """Keys with the ``admin`` scope only; a ``chat`` key gets 403."""

    message = "This operation needs an API key with the admin scope."
    # Read by daneshyar.schema.AutoSchema: operations behind it document 403.
    refuses_scope = True

    def has_permission(self, request: Request, view: Any) -> bool:
        return isinstance(request.auth, ApiKey) and request.auth.is_admin
