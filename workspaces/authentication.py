from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from workspaces.keys import hash_key, looks_like_key
from workspaces.models import ApiKey

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


class BearerKeyAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer dk_live_…``: the same keys, sent the way the
    OpenAI SDKs and OpenAI-compatible front ends send theirs. Used by the
    OpenAI-compatible endpoint only."""

    def authenticate(self, request: Request) -> tuple[ApiKey, ApiKey] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        scheme, _, credentials = header.partition(" ")
        if scheme.lower() != "bearer":
            return None
        api_key = key_authenticate(credentials)
        return api_key, api_key

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


class BearerKeyScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "workspaces.authentication.BearerKeyAuthentication"
    name = "BearerKeyAuth"

    def get_security_definition(self, auto_schema: object) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "The same dk_live_ keys as X-API-Key."}


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "workspaces.authentication.ApiKeyAuthentication"
    name = "ApiKeyAuth"

    def get_security_definition(self, auto_schema: object) -> dict[str, str]:
        return {"type": "apiKey", "in": "header", "name": "X-API-Key"}
