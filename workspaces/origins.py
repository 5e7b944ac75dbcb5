"""Browser origins a workspace allows (``Workspace.allowed_origins``).

An origin is what a browser sends in its ``Origin`` header: a scheme, a host
and a port when it is not the scheme's default — ``https://shop.example``,
``http://localhost:8080``. No path, query, user name or wildcard: a listed
origin is compared as a string with the header, so it is stored in the form
browsers send (lower case, no default port, no trailing slash).
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

ORIGIN_MAX_LENGTH = 200
MAX_ORIGINS = 50
_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_normalize(value: str) -> str:
    """``value`` as a browser would send it in ``Origin``; ValueError with the reason otherwise."""
    text = value.strip()
    if not text or len(text) > ORIGIN_MAX_LENGTH:
        raise ValueError(f"An origin is 1 to {ORIGIN_MAX_LENGTH} characters.")
    if "*" in text:
        raise ValueError("Wildcards are not supported: list each origin.")
    if not text.isascii() or any(c.isspace() for c in text):
        raise ValueError("Write the host in ASCII (punycode for international names), without spaces.")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise ValueError("Not an origin: scheme://host[:port].") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise ValueError("The scheme must be http or https.")
    host = (parts.hostname or "").lower()
    if not host or parts.username is not None or parts.password is not None:
        raise ValueError("Not an origin: scheme://host[:port].")
    if parts.path not in ("", "/") or parts.query or parts.fragment or text.endswith("?") or "#" in text:
        raise ValueError("An origin has no path, query or fragment: scheme://host[:port].")
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def origins_normalize(values: Iterable[str]) -> tuple[list[str], dict[int, str]]:
    """The normalized distinct origins, in order, and the problems by position."""
    out: list[str] = []
    problems: dict[int, str] = {}
    for index, value in enumerate(values):
        try:
            origin = origin_normalize(value)
        except ValueError as exc:
            problems[index] = str(exc)
            continue
        if origin not in out:
            out.append(origin)
    if len(out) > MAX_ORIGINS:
        problems[MAX_ORIGINS] = f"At most {MAX_ORIGINS} origins."
    return out, problems


def origins_validate(values: list[str]) -> None:
    """Model validator: every origin valid and written as browsers send it."""
    problems = []
    for value in values:
        try:
            normalized = origin_normalize(value)
        except ValueError as exc:
            problems.append(f"{value!r}: {exc}")
            continue
        if normalized != value:
            problems.append(f"{value!r}: write it as {normalized!r}.")
    if len(values) > MAX_ORIGINS:
        problems.append(f"At most {MAX_ORIGINS} origins.")
    if problems:
        raise ValidationError(problems)
