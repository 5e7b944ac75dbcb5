"""Where a webhook may be posted: the SSRF rules, and the POST itself.

A URL is http or https with a host and no credentials. Its host is resolved
and every address checked — at creation and again at every delivery, since
a name may point elsewhere by then — and the connection goes to an address
that was checked (never resolved a second time, so a name cannot answer
one address to the check and another to the connection). Loopback,
private, link-local (169.254.169.254, the cloud metadata service, among
them), unspecified, multicast and reserved addresses are refused unless
the deployment sets WEBHOOK_ALLOW_PRIVATE. Redirects are never followed.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import urllib3
from django.conf import settings

MAX_URL_CHARS = 2000
# What is kept of a receiver's answer: enough to see an error, never a large body.
MAX_READ_BYTES = 4096
# The most the connection may take of an attempt (WEBHOOK_TIMEOUT_SECONDS).
CONNECT_SECONDS = 5.0


class UnsafeUrl(Exception):
    """The URL may not be posted to; ``str(exc)`` says why."""


class Unresolvable(UnsafeUrl):
    """The host has no address (now)."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str


def url_parse(url: str) -> Target:
    """The URL's parts, or :class:`UnsafeUrl` (no address is looked up here)."""
    if len(url) > MAX_URL_CHARS:
        raise UnsafeUrl(f"At most {MAX_URL_CHARS} characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise UnsafeUrl("Not a valid URL.") from None
    if parts.scheme not in ("http", "https"):
        raise UnsafeUrl("Only http and https URLs are allowed.")
    if not parts.hostname:
        raise UnsafeUrl("The URL has no host.")
    if parts.username is not None or parts.password is not None:
        raise UnsafeUrl("The URL may not carry a user name or password.")
    if any(c.isspace() or ord(c) < 32 for c in url):
        raise UnsafeUrl("The URL may not contain spaces or control characters.")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80), path)


def address_refused(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return bool(
        ip.is_loopback
        or ip.is_private
        or ip.is_link_local
        or ip.is_unspecified
        or ip.is_multicast
        or ip.is_reserved
        or not ip.is_global
    )


def addresses_checked(target: Target) -> list[str]:
    """The host's addresses, every one allowed; :class:`UnsafeUrl` otherwise."""
    try:
        found = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError, ValueError):
        raise Unresolvable(f"The host {target.host} does not resolve.") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
    if not addresses:
        raise Unresolvable(f"The host {target.host} does not resolve.")
    if not settings.WEBHOOK_ALLOW_PRIVATE and any(address_refused(a) for a in addresses):
        raise UnsafeUrl(
            f"The host {target.host} resolves to a loopback, private, link-local or reserved address."
        )
    return addresses


def url_check(url: str) -> Target:
    """At creation: the URL's form, and its host's addresses. A name that does
    not resolve yet is accepted (a receiver set up after its endpoint): every
    delivery checks it again, and an unresolvable one is a failed attempt."""
    target = url_parse(url)
    if settings.WEBHOOK_ALLOW_PRIVATE:
        return target  # any address is allowed: nothing to look up
    with contextlib.suppress(Unresolvable):
        addresses_checked(target)
    return target


def _drain(response: urllib3.BaseHTTPResponse, deadline: float) -> None:
    """Read at most MAX_READ_BYTES of the answer, and only until ``deadline``."""
    left = MAX_READ_BYTES
    while left > 0:
        if time.monotonic() > deadline:
            raise urllib3.exceptions.ReadTimeoutError(None, "", "The answer took longer than the deadline.")  # type: ignore[arg-type]
        chunk = response.read(min(left, 8192))
        if not chunk:
            return
        left -= len(chunk)


def post(url: str, *, body: bytes, headers: dict[str, str]) -> int:
    """POST ``body`` to ``url`` at one of its checked addresses; the status
    code (a redirect is an answer like any other). :class:`UnsafeUrl` when
    the URL is refused; ``urllib3`` errors when the connection fails."""
    target = url_parse(url)
    address = addresses_checked(target)[0]
    default_port = 443 if target.scheme == "https" else 80
    host_header = target.host if target.port == default_port else f"{target.host}:{target.port}"
    if ":" in target.host:  # an IPv6 literal
        host_header = f"[{target.host}]" if target.port == default_port else f"[{target.host}]:{target.port}"
    total = float(settings.WEBHOOK_TIMEOUT_SECONDS)
    # A short connect, and one deadline for the whole attempt: a receiver that
    # hangs or trickles its answer is a failed attempt after ``total`` seconds.
    timeout = urllib3.Timeout(connect=min(CONNECT_SECONDS, total), read=total, total=total)
    deadline = time.monotonic() + total
    pool: urllib3.HTTPConnectionPool
    if target.scheme == "https":
        pool = urllib3.HTTPSConnectionPool(
            address, target.port, timeout=timeout, retries=False, server_hostname=target.host,
            assert_hostname=target.host,
        )  # fmt: skip
    else:
        pool = urllib3.HTTPConnectionPool(address, target.port, timeout=timeout, retries=False)
    with pool:
        response = pool.urlopen(
            "POST",
            target.path,
            body=body,
            headers={**headers, "Host": host_header},
            redirect=False,
            retries=False,
            preload_content=False,
        )
        try:
            _drain(response, deadline)
        finally:
            response.release_conn()
        return int(response.status)
