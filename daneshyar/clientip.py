"""The client's address, for the admin login's lockout (django-axes).

gunicorn may sit behind proxies that append the address they saw to
``X-Forwarded-For``. A request from a proxy on this host or a private
network is read from the right of that list: each internal address is a
proxy of ours (skipped), and the first address that is not is the client —
what the nearest outside-facing proxy saw, which the client cannot choose.
A request over a Unix socket (no address: ``make run``'s proxy, which
replaces the header with the address it saw) is read the same way. A
request from a public address reached gunicorn directly: its own header
is ignored.
"""

from __future__ import annotations

import ipaddress

from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str:
    remote = str(request.META.get("REMOTE_ADDR") or "")
    # No address: the request came over gunicorn's Unix socket, which only a
    # proxy on this host reaches (make run's daneshyar/devproxy.py, in a
    # private directory; it sets X-Forwarded-For to the peer it saw).
    if remote and not _internal(remote):
        return remote
    hops = [hop.strip() for hop in str(request.META.get("HTTP_X_FORWARDED_FOR") or "").split(",")]
    hops = [hop for hop in hops if hop]
    for hop in reversed(hops):
        if not _internal(hop):
            return hop
    # Every hop internal (a client on the private network): the first one.
    return hops[0] if hops else remote


def _internal(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return ip.is_private or ip.is_loopback or ip.is_link_local
