"""The client's address, for the admin login's lockout (django-axes)."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str:
    """``REMOTE_ADDR``; behind the TLS proxy (``BEHIND_TLS_PROXY``) the address
    that proxy appended last to ``X-Forwarded-For`` (the hops before it are
    whatever the client sent, so they never count)."""
    remote = str(request.META.get("REMOTE_ADDR") or "")
    if not settings.BEHIND_TLS_PROXY:
        return remote
    forwarded = str(request.META.get("HTTP_X_FORWARDED_FOR") or "")
    last = forwarded.rsplit(",", 1)[-1].strip()
    return last or remote
