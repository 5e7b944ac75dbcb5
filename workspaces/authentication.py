from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from workspaces.keys import KEY_PREFIX, hash_key, looks_like_key
from workspaces.models import ApiKey
from workspaces.principals import EndUser
from workspaces.tokens import end_user_token_verify

HEADER = "HTTP_X_API_KEY"
# last_used_at is advisory: refresh it at most this often per key so that a
# busy key does not turn every read into a write.
LAST_USED_RESOLUTION = timedelta(minutes=5)


def key_authenticate(raw: str) -> ApiKey:
    """The active key whose plaintext is ``raw`` (401 otherwise)."""
    plaintext = raw.strip()
    if not looks_like_key(plaintext):
        raise exceptions.AuthenticationFailed("Invalid API key.")
    try:
        # The organization comes along: its rate limits are read on every request.
        api_key = ApiKey.objects.active().select_related("organization").get(key_hash=hash_key(plaintext))
    except ApiKey.DoesNotExist:
        raise exceptions.AuthenticationFailed("Invalid or revoked API key.") from None
    now = timezone.now()
    if api_key.last_used_at is None or now - api_key.last_used_at > LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        api_key.last_used_at = now
    return api_key


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """``X-API-Key: dk_live_…``. One indexed lookup on ``key_hash``; no cache,
    so a revoked key stops working on its next request."""

    def authenticate(self, request: Request) -> tuple[ApiKey, ApiKey] | None:
        raw = request.META.get(HEADER)
        if raw is None:
            return None  # -> NotAuthenticated (401) from the permission check
        api_key = key_authenticate(raw)
        return api_key, api_key

    def authenticate_header(self, request: Request) -> str:
        # Makes DRF answer 401 (not 403) when no key was sent.
        return "X-API-Key"


def bearer_credentials(request: Request) -> str | None:
    """The credentials of ``Authorization: Bearer …``, or None without one."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, credentials = header.partition(" ")
    return credentials.strip() if scheme.lower() == "bearer" else None


def is_key_shaped(credentials: str) -> bool:
    """An API key (``dk_…``) rather than an end-user token (a JWT)."""
    return credentials.startswith(KEY_PREFIX[:3])


class BearerKeyAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer dk_live_…``: the same keys, sent the way the
    OpenAI SDKs and OpenAI-compatible front ends send theirs. Accepted
    wherever ``X-API-Key`` is. Other bearer credentials are left to
    :class:`EndUserTokenAuthentication` on the routes that take end-user
    tokens; elsewhere the request is unauthenticated (401)."""

    def authenticate(self, request: Request) -> tuple[ApiKey, ApiKey] | None:
        credentials = bearer_credentials(request)
        if credentials is None or not is_key_shaped(credentials):
            return None
        api_key = key_authenticate(credentials)
        return api_key, api_key

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


class EndUserTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer <end-user token>`` (workspaces/tokens.py), on
    the end-user routes only: a view accepts tokens by listing this class.
    The principal is an :class:`~workspaces.principals.EndUser`, never an
    API key."""

    def authenticate(self, request: Request) -> tuple[EndUser, EndUser] | None:
        credentials = bearer_credentials(request)
        if credentials is None or is_key_shaped(credentials):
            return None
        end_user = end_user_token_verify(credentials)
        return end_user, end_user

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


def accepts_end_user_tokens(view_class: type) -> bool:
    """Whether a view takes end-user tokens (CORS follows the same answer)."""
    classes = getattr(view_class, "authentication_classes", ())
    return any(isinstance(c, type) and issubclass(c, EndUserTokenAuthentication) for c in classes)


class BearerKeyScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "workspaces.authentication.BearerKeyAuthentication"
    name = "BearerKeyAuth"

    def get_security_definition(self, auto_schema: object) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "The same dk_live_ keys as X-API-Key."}


class EndUserTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "workspaces.authentication.EndUserTokenAuthentication"
    name = "EndUserToken"

    def get_security_definition(self, auto_schema: object) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT",
            "description": "An end-user token (POST …/end-user-tokens/, or minted with the workspace's "
            "signing secret): one end user of one workspace, on the end-user routes only. Its sub is the "
            "external_user_id; 401 token_expired / token_invalid.",
        }


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "workspaces.authentication.ApiKeyAuthentication"
    name = "ApiKeyAuth"

    def get_security_definition(self, auto_schema: object) -> dict[str, str]:
        return {"type": "apiKey", "in": "header", "name": "X-API-Key"}
