"""Fetching one URL for a source, through the service's one way out
(:class:`daneshyar.outbound.OutboundSession`): the address rules on the
request and on every redirect, one whole deadline
(SOURCES_FETCH_TIMEOUT_SECONDS: connection, headers and body together, so a
server trickling its answer is given up on time), conditional headers sent,
the body cut at a size limit."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from daneshyar.outbound import OutboundFailed, OutboundSession

USER_AGENT = "DaneshyarBot/1.0 (+https://github.com/daneshyar)"
MAX_REDIRECTS = 5


class FetchFailed(Exception):
    """No answer: the host does not resolve, the connection failed, the
    deadline passed, or the body is over the limit."""


@dataclass(frozen=True)
class Answer:
    status: int
    url: str  # after redirects
    body: bytes
    etag: str
    last_modified: str
    content_type: str


def get(url: str, *, max_bytes: int, etag: str = "", last_modified: str = "") -> Answer:
    """GET ``url`` (following at most MAX_REDIRECTS redirects, each checked);
    a 304 when the validators sent still hold. :class:`UnsafeUrl` when an
    address is refused, :class:`FetchFailed` when there is no answer."""
    headers = {"Accept-Encoding": "identity"}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    session = OutboundSession(
        timeout=float(settings.SOURCES_FETCH_TIMEOUT_SECONDS),
        user_agent=USER_AGENT,
        max_redirects=MAX_REDIRECTS,
    )
    try:
        answer = session.get(url, max_bytes=max_bytes, headers=headers)
    except OutboundFailed as exc:
        raise FetchFailed(str(exc)) from None
    if answer.status == 200 and not answer.complete:
        raise FetchFailed(f"The page is larger than {max_bytes:,} bytes.")
    return Answer(
        status=answer.status,
        url=answer.url,
        body=answer.body,
        etag=answer.header("ETag")[:255],
        last_modified=answer.header("Last-Modified")[:64],
        content_type=answer.header("Content-Type"),
    )
