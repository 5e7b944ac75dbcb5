"""The one tenant boundary of the HTTP API.

Every view under ``/api/v1/workspaces/{workspace_id}/`` derives from
:class:`WorkspaceApi`, which resolves, in this order and before the handler
runs:

1. the API key (401 ``unauthenticated`` when missing, unknown or revoked);
2. the workspace (404 ``not_found`` when it belongs to another organization,
   is outside the key's allow-list, or does not exist: the three are
   indistinguishable);
3. the scope (403 ``forbidden`` when the method needs an ``admin`` key).

So a key never learns from a 403 that a workspace it may not see exists.
``tests/workspaces/test_access.py`` walks the URLconf and checks that every
workspace-scoped route goes through here.
"""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from rest_framework import serializers
from rest_framework.exceptions import NotAuthenticated
from rest_framework.request import Request
from rest_framework.views import APIView

from daneshyar.exceptions import Forbidden
from workspaces.models import ApiKey, Workspace
from workspaces.permissions import HasApiKey
from workspaces.ratelimit import rate_limit_turn, rate_limit_upload
from workspaces.selectors import workspace_get

ADMIN_SCOPE_MESSAGE = "This operation needs an API key with the admin scope."


def request_api_key(request: Request) -> ApiKey:
    """The authenticated key (views run after ``HasApiKey``)."""
    api_key = request.auth
    if not isinstance(api_key, ApiKey):  # HasApiKey runs first; never reached through a view
        raise NotAuthenticated()
    return api_key


def request_workspace(request: Request, workspace_id: uuid.UUID | str, *, admin: bool = False) -> Workspace:
    """Key → workspace (404) → scope (403), in that order."""
    api_key = request_api_key(request)
    workspace = workspace_get(api_key=api_key, workspace_id=workspace_id)
    if admin and not api_key.is_admin:
        raise Forbidden(ADMIN_SCOPE_MESSAGE)
    return workspace


class WorkspaceApi(APIView):
    # Base of every workspace-scoped view: ``self.api_key`` and
    # ``self.workspace`` are set before the handler runs. ``admin_methods``
    # lists the HTTP methods that need an ``admin`` key; the others are open
    # to ``chat`` keys too. (Comments, not a docstring: drf-spectacular would
    # publish an inherited docstring as every operation's description.)

    # Methods that are chat turns or document uploads: they also count
    # against those rate limits (workspaces/ratelimit.py), after the scope check.
    # A turn's body is validated first (``turn_serializer``; the end user is
    # its ``turn_user_field``): an invalid body is a 400 that neither charges
    # nor reveals any end user's limit. The handler reads ``turn_input``.
    permission_classes = [HasApiKey]
    admin_methods: ClassVar[frozenset[str]] = frozenset()
    turn_methods: ClassVar[frozenset[str]] = frozenset()
    upload_methods: ClassVar[frozenset[str]] = frozenset()
    turn_serializer: ClassVar[type[serializers.Serializer[Any]] | None] = None
    turn_user_field: ClassVar[str] = "external_user_id"

    api_key: ApiKey
    workspace: Workspace
    turn_input: dict[str, Any]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # authentication, HasApiKey, throttles
        self.api_key = request_api_key(request)
        method = (request.method or "").upper()
        self.workspace = request_workspace(
            request, kwargs["workspace_id"], admin=method in self.admin_methods
        )
        if method in self.upload_methods:
            rate_limit_upload(request, api_key=self.api_key, workspace=self.workspace)
        if method in self.turn_methods:
            rate_limit_turn(
                request, api_key=self.api_key, workspace=self.workspace, end_user=self.end_user_of(request)
            )

    def method_error_statuses(self, method: str) -> frozenset[int]:
        """The error statuses ``method`` answers that its shape does not show,
        for the schema (daneshyar.schema.AutoSchema): 403 for an admin-only
        method (a chat key), 502 and 503 for a chat turn (the generation
        backend)."""
        statuses: set[int] = set()
        if method in self.admin_methods:
            statuses.add(403)
        if method in self.turn_methods:
            statuses |= {502, 503}
        return frozenset(statuses)

    def end_user_of(self, request: Request) -> str | None:
        """The end user a chat turn is for, from its validated body (400 first
        when the body is invalid); None for a view without ``turn_serializer``."""
        if self.turn_serializer is None:
            return None
        serializer = self.turn_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        self.turn_input = dict(serializer.validated_data)
        value = self.turn_input.get(self.turn_user_field)
        return value if isinstance(value, str) and value else None
