"""Where the service may connect: a URL's parts, its host's addresses, and
the rules every address is checked against (SSRF).

A URL is http or https with a host and no credentials. Its host is resolved
and every address checked; the connection then goes to one of the checked
addresses, never resolving the name a second time (so a name cannot answer
one address to the check and another to the connection). Refused, unless
the deployment sets OUTBOUND_ALLOW_PRIVATE: loopback, private, link-local
(169.254.169.254, the cloud metadata service, among them), unspecified,
multicast, reserved and every other non-global address; 6to4 (``2002::/16``)
and the deprecated site-local ``fec0::/10``; and an IPv4-mapped or NAT64
address whose IPv4 address is refused.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

MAX_URL_CHARS = 2000

# Refused outright, beyond what ipaddress's flags say (Python counts both as
# global): 6to4 carries an IPv4 address (2002:7f00:1:: is 127.0.0.1) and a
# relay may forward it anywhere; fec0::/10 is site-local, deprecated by
# RFC 3879 but still routed inside some networks.
REFUSED_NETWORKS = (ipaddress.IPv6Network("2002::/16"), ipaddress.IPv6Network("fec0::/10"))
# NAT64's well-known prefix (RFC 6052): the address reached is the IPv4
# address in the last 32 bits, so that one is judged.
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class UnsafeUrl(Exception):
    """The URL may not be fetched or posted to; ``str(exc)`` says why."""


class Unresolvable(UnsafeUrl):
    """The host has no address (now)."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str  # with its query

    @property
    def host_header(self) -> str:
        """The ``Host`` header: the name (an IPv6 literal bracketed), and the
        port when it is not the scheme's."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        default_port = 443 if self.scheme == "https" else 80
        return host if self.port == default_port else f"{host}:{self.port}"


def private_allowed() -> bool:
    return bool(settings.OUTBOUND_ALLOW_PRIVATE)


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


def _flagged(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return bool(
        ip.is_loopback
        or ip.is_private
        or ip.is_link_local
        or ip.is_unspecified
        or ip.is_multicast
        or ip.is_reserved
        or not ip.is_global
    )


def address_refused(address: str) -> bool:
    """Whether the rules refuse ``address`` (a scope suffix, ``%eth0``, ignored)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv4Address):
        return _flagged(ip)
    if any(ip in network for network in REFUSED_NETWORKS):
        return True
    embedded = ip.ipv4_mapped
    if embedded is None and ip in NAT64:
        embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return _flagged(ip if embedded is None else embedded)


def addresses_checked(target: Target) -> list[str]:
    """The host's addresses, every one allowed; :class:`UnsafeUrl` otherwise."""
    try:
        found = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError, ValueError):
        raise Unresolvable(f"The host {target.host} does not resolve.") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
    if not addresses:
        raise Unresolvable(f"The host {target.host} does not resolve.")
    if not private_allowed() and any(address_refused(a) for a in addresses):
        raise UnsafeUrl(
            f"The host {target.host} resolves to a loopback, private, link-local or reserved address."
        )
    return addresses


def url_check(url: str) -> Target:
    """At creation (a webhook endpoint, a web source): the URL's form, and its
    host's addresses. A name that does not resolve yet is accepted (a server
    set up after the URL was registered): every request checks it again, and
    an unresolvable one fails then."""
    target = url_parse(url)
    if private_allowed():
        return target  # any address is allowed: nothing to look up
    with contextlib.suppress(Unresolvable):
        addresses_checked(target)
    return target
