"""Which browser requests get CORS headers: django-cors-headers asks
:func:`cors_allowed` (its ``check_request_enabled`` signal) for every
request under /api/v1/ that carries an ``Origin``.

Allowed only when all hold:

- the route takes end-user tokens (the same test as authentication:
  ``accepts_end_user_tokens``), so admin routes never answer a browser;
- the request does not carry an API key (``X-API-Key``, or a ``dk_…``
  bearer), nor does a preflight announce one: an organization's key must
  never be usable from a page;
- the ``Origin`` is listed in the workspace's ``allowed_origins`` (for
  ``GET /models/``, which names no workspace: in the token's workspace —
  read without verifying the token, which the view does next — and for its
  preflight, which carries no token, in any workspace's).

The answer is remembered on the request: the middleware asks twice.
"""

from __future__ import annotations

import uuid
from typing import Any

import jwt
from django.http import HttpRequest
from django.urls import Resolver404, resolve

from workspaces.authentication import accepts_end_user_tokens, is_key_shaped
from workspaces.models import Workspace

ATTRIBUTE = "_daneshyar_cors_allowed"


def cors_allowed(sender: Any, request: HttpRequest, **kwargs: Any) -> bool:
    cached = getattr(request, ATTRIBUTE, None)
    if cached is None:
        cached = _decide(request)
        setattr(request, ATTRIBUTE, cached)
    return bool(cached)


def _decide(request: HttpRequest) -> bool:
    origin = request.headers.get("origin")
    if not origin or _carries_api_key(request):
        return False
    try:
        match = resolve(request.path_info)
    except Resolver404:
        return False
    if not accepts_end_user_tokens(getattr(match.func, "view_class", type(None))):
        return False
    workspace_id = match.kwargs.get("workspace_id") or _token_workspace_id(request)
    if workspace_id is None:
        if request.method == "OPTIONS" and "access-control-request-method" in request.headers:
            return Workspace.objects.filter(allowed_origins__contains=[origin]).exists()
        return False
    allowed = Workspace.objects.filter(id=workspace_id).values_list("allowed_origins", flat=True).first()
    return allowed is not None and origin in allowed


def _carries_api_key(request: HttpRequest) -> bool:
    if "x-api-key" in request.headers:
        return True
    scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and is_key_shaped(credentials.strip()):
        return True
    announced = request.headers.get("access-control-request-headers", "")
    return "x-api-key" in {h.strip().lower() for h in announced.split(",")}


def _token_workspace_id(request: HttpRequest) -> uuid.UUID | None:
    """The workspace a (not yet verified) bearer token names, for a route
    without one in its path."""
    scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    try:
        claims = jwt.decode(credentials.strip(), options={"verify_signature": False})
        return uuid.UUID(str(claims.get("wid")))
    except (jwt.PyJWTError, ValueError):
        return None
