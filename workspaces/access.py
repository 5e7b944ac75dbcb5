"""The one tenant boundary of the HTTP API.

Every view under ``/api/v1/workspaces/{workspace_id}/`` derives from
:class:`WorkspaceApi`, which resolves, in this order and before the handler
runs:

1. the API key (401 ``unauthenticated`` when missing, unknown or revoked) —
   or, on the end-user routes (:class:`EndUserApi`), an end-user token
   (401 ``token_invalid`` / ``token_expired``);
2. the workspace (404 ``not_found`` when it belongs to another organization,
   is outside the key's allow-list, or does not exist: the three are
   indistinguishable; 401 ``token_invalid`` for a token of another workspace);
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

from daneshyar import timing
from daneshyar.exceptions import Forbidden, TokenInvalid
from daneshyar.views import RowMixin
from workspaces.authentication import (
    ApiKeyAuthentication,
    BearerKeyAuthentication,
    EndUserTokenAuthentication,
)
from workspaces.models import ApiKey, Workspace
from workspaces.permissions import HasApiKey, HasApiKeyOrEndUser
from workspaces.principals import EndUser, Principal
from workspaces.ratelimit import rate_limit_turn, rate_limit_upload
from workspaces.selectors import workspace_get

ADMIN_SCOPE_MESSAGE = "This operation needs an API key with the admin scope."
END_USER_MISMATCH_MESSAGE = "external_user_id differs from the end user of this token."


def request_api_key(request: Request) -> ApiKey:
    """The authenticated key (views run after ``HasApiKey``)."""
    api_key = request.auth
    if not isinstance(api_key, ApiKey):  # HasApiKey runs first; never reached through a view
        raise NotAuthenticated()
    return api_key


def request_principal(request: Request) -> Principal:
    """The key or the end user (views run after their permission class)."""
    principal = request.auth
    if not isinstance(principal, ApiKey | EndUser):  # never reached through a view
        raise NotAuthenticated()
    return principal


def request_workspace(request: Request, workspace_id: uuid.UUID | str, *, admin: bool = False) -> Workspace:
    """Key → workspace (404) → scope (403), in that order. An end-user
    token is for one workspace: on another's URL it is 401 ``token_invalid``
    (it was not issued for this workspace; nothing is said about that one)."""
    principal = request_principal(request)
    if isinstance(principal, EndUser):
        if str(principal.workspace.id) != str(workspace_id):
            raise TokenInvalid("This end-user token is for another workspace.")
        if admin:  # no admin method takes tokens; kept so that none ever could
            raise Forbidden(ADMIN_SCOPE_MESSAGE)
        return principal.workspace
    workspace = workspace_get(api_key=principal, workspace_id=workspace_id)
    if admin and not principal.is_admin:
        raise Forbidden(ADMIN_SCOPE_MESSAGE)
    return workspace


def end_user_resolve(principal: Principal, given: object) -> object:
    """The end user a request is for: with an end-user token the token's
    (``given`` may be omitted, or the same: otherwise 403); with a key,
    ``given`` as sent (validated by the caller)."""
    if not isinstance(principal, EndUser):
        return given
    if given is not None and given != principal.external_user_id:
        raise Forbidden(END_USER_MISMATCH_MESSAGE)
    return principal.external_user_id


def with_end_user(data: object, principal: Principal, field: str = "external_user_id") -> object:
    """A request body with ``field`` decided by :func:`end_user_resolve` (a
    body that is not an object is returned as is, for the serializer to refuse)."""
    if not isinstance(data, dict) or not isinstance(principal, EndUser):
        return data
    return {**data, field: end_user_resolve(principal, data.get(field))}


class WorkspaceApi(APIView):
    # Base of every workspace-scoped view: ``self.principal`` and
    # ``self.workspace`` are set before the handler runs. ``admin_methods``
    # lists the HTTP methods that need an ``admin`` key; the others are open
    # to ``chat`` keys too. (Comments, not a docstring: drf-spectacular would
    # publish an inherited docstring as every operation's description.)

    # Methods that are chat turns or document uploads: they also count
    # against those rate limits (workspaces/ratelimit.py), after the scope check.
    # A turn's body is validated first (``turn_serializer``; the end user is
    # its ``turn_user_field``, an end-user token's own): an invalid body is a
    # 400 that neither charges nor reveals any end user's limit. The handler
    # reads ``turn_input``. ``self.principal`` is the key, or on an
    # EndUserApi possibly an EndUser.
    permission_classes = [HasApiKey]
    admin_methods: ClassVar[frozenset[str]] = frozenset()
    turn_methods: ClassVar[frozenset[str]] = frozenset()
    upload_methods: ClassVar[frozenset[str]] = frozenset()
    turn_serializer: ClassVar[type[serializers.Serializer[Any]] | None] = None
    turn_user_field: ClassVar[str] = "external_user_id"

    principal: Principal
    workspace: Workspace
    turn_input: dict[str, Any]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        with timing.phase("auth"):
            self._initial(request, *args, **kwargs)

    def _initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # authentication, permission, throttles
        self.principal = request_principal(request)
        method = (request.method or "").upper()
        self.workspace = request_workspace(
            request, kwargs["workspace_id"], admin=method in self.admin_methods
        )
        if method in self.upload_methods:
            rate_limit_upload(request, principal=self.principal, workspace=self.workspace)
        if method in self.turn_methods:
            rate_limit_turn(
                request,
                principal=self.principal,
                workspace=self.workspace,
                end_user=self.end_user_of(request),
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
        when the body is invalid; 403 when a token's end user is not the one
        sent); the token's own on a view without ``turn_serializer``."""
        if self.turn_serializer is None:
            return self.principal.external_user_id if isinstance(self.principal, EndUser) else None
        data = with_end_user(request.data, self.principal, self.turn_user_field)
        serializer = self.turn_serializer(data=data)
        serializer.is_valid(raise_exception=True)
        self.turn_input = dict(serializer.validated_data)
        value = self.turn_input.get(self.turn_user_field)
        return value if isinstance(value, str) and value else None


class EndUserApi(WorkspaceApi):
    # Base of the end-user routes: also open to an end-user token of this
    # workspace (workspaces/tokens.py), and to browsers of the workspace's
    # allowed_origins (workspaces/cors.py). Its handlers read the end user
    # with with_end_user / end_user_resolve, never from the body alone.
    authentication_classes = [ApiKeyAuthentication, BearerKeyAuthentication, EndUserTokenAuthentication]
    permission_classes = [HasApiKeyOrEndUser]
    # Whether the operations name an end user (a token sending another one: 403).
    names_end_user: ClassVar[bool] = True

    def method_error_statuses(self, method: str) -> frozenset[int]:
        statuses = super().method_error_statuses(method)
        return statuses | {403} if self.names_end_user else statuses


class WorkspaceGenericApi(RowMixin, WorkspaceApi):
    # Base of the workspace-scoped generic views (daneshyar/views.py): their
    # lists' rows and new rows belong to the workspace unless a view says
    # another owner (a row of the path).
    def owner(self, **path: Any) -> Any:
        return self.workspace
