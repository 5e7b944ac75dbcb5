"""Every request the service makes to the network: :class:`OutboundSession`.

Web sources' pages, sitemaps and robots.txt (resources/sources/) and webhook
deliveries (workspaces/webhooks/) all go out through it — one class with the
deadline, the size bound and the address rules, the way zulip's
``OutgoingSession`` is its one way out. Per call: the URL and every address
its host resolves to checked (daneshyar/outbound/addresses.py), the
connection made to a checked address, one whole deadline for connection,
request, headers and body together (daneshyar/outbound/deadline.py), at most
``max_bytes`` of the body read, and redirects followed only where the
session says (GET only), each hop checked like the first. The host's name
is looked up by the system resolver, bounded by its own timeouts; the time
it takes counts against the deadline.
"""

from __future__ import annotations

import http.client
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urljoin

from daneshyar.outbound import addresses
from daneshyar.outbound.connection import CheckedConnection
from daneshyar.outbound.deadline import Deadline, OutboundFailed

REDIRECTS = frozenset({301, 302, 303, 307, 308})
READ_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Answer:
    status: int
    url: str  # after redirects
    headers: dict[str, str]  # names in lower case
    body: bytes  # at most the call's ``max_bytes``
    complete: bool  # False: the body went on past ``max_bytes`` (the rest unread)

    def header(self, name: str) -> str:
        return self.headers.get(name.lower(), "")


def _body(response: http.client.HTTPResponse, max_bytes: int) -> tuple[bytes, bool]:
    """At most ``max_bytes`` of the body, and whether that was all of it.
    ``read1`` returns what has arrived; the deadline ends a body that stalls."""
    chunks: list[bytes] = []
    size = 0
    while size <= max_bytes:
        chunk = response.read1(min(READ_CHUNK, max_bytes + 1 - size))
        if not chunk:
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)[:max_bytes], False


def _exchange(
    method: str, url: str, *, body: bytes | None, headers: dict[str, str], max_bytes: int, deadline: Deadline
) -> Answer:
    """One request and its answer, no redirect followed."""
    target = addresses.url_parse(url)
    checked = addresses.addresses_checked(target)
    deadline.left()  # the name's resolution counts against the deadline too
    connection = CheckedConnection(target, checked, deadline)
    try:
        connection.request(method, target.path, body=body, headers={**headers, "Host": target.host_header})
        response = connection.getresponse()
        data, complete = _body(response, max_bytes)
    except (OSError, http.client.HTTPException) as exc:
        if deadline.passed():
            raise deadline.exceeded() from None
        raise OutboundFailed(f"{type(exc).__name__}: {exc}"[:500]) from None
    finally:
        connection.close()
    if deadline.expired:  # the socket was shut under the read: what came is not the whole body
        raise deadline.exceeded()
    names = {name.lower(): value for name, value in response.getheaders()}
    return Answer(status=response.status, url=url, headers=names, body=data, complete=complete)


@dataclass(frozen=True)
class OutboundSession:
    """How one kind of call goes out: its whole deadline (seconds), its
    ``User-Agent``, and how many redirects a GET follows (0: a redirect is
    an answer like any other)."""

    timeout: float
    user_agent: str
    max_redirects: int = 0

    def get(self, url: str, *, max_bytes: int, headers: Mapping[str, str] | None = None) -> Answer:
        return self.request("GET", url, max_bytes=max_bytes, headers=headers)

    def post(
        self, url: str, *, body: bytes, max_bytes: int, headers: Mapping[str, str] | None = None
    ) -> Answer:
        return self.request("POST", url, body=body, max_bytes=max_bytes, headers=headers)

    def request(
        self,
        method: str,
        url: str,
        *,
        max_bytes: int,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Answer:
        """The answer, within one deadline for every hop. :class:`UnsafeUrl`
        when a URL or an address is refused (a redirect's included),
        :class:`OutboundFailed` when there is no answer (``DeadlineExceeded``
        when the deadline passed first)."""
        sent = {"User-Agent": self.user_agent, "Connection": "close", **(headers or {})}
        hops = self.max_redirects if method == "GET" else 0
        with Deadline(self.timeout) as deadline:
            for _ in range(hops + 1):
                answer = _exchange(
                    method, url, body=body, headers=sent, max_bytes=max_bytes, deadline=deadline
                )
                location = answer.header("Location")
                if hops == 0 or answer.status not in REDIRECTS or not location:
                    return answer
                url = urljoin(url, location)
        raise OutboundFailed(f"More than {self.max_redirects} redirects.")
