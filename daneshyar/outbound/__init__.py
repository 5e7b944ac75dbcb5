"""The one way out to the network (docs/architecture.md): everything the
service fetches or posts — web sources' pages, sitemaps and robots.txt,
webhook deliveries — goes through :class:`OutboundSession`.

``addresses`` (a URL's parts and the address rules, OUTBOUND_ALLOW_PRIVATE),
``deadline`` (one whole deadline per call: a watchdog that shuts the socket
down), ``connection`` (HTTP to a checked address, TLS for the URL's host),
``session`` (the request: redirects, the size bound, the answer).
"""

from daneshyar.outbound.addresses import MAX_URL_CHARS, Unresolvable, UnsafeUrl, url_check
from daneshyar.outbound.deadline import DeadlineExceeded, OutboundFailed
from daneshyar.outbound.session import Answer, OutboundSession

__all__ = [
    "MAX_URL_CHARS",
    "Answer",
    "DeadlineExceeded",
    "OutboundFailed",
    "OutboundSession",
    "Unresolvable",
    "UnsafeUrl",
    "url_check",
]
