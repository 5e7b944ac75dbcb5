"""Fetching one URL for a source: the SSRF rules of the webhooks
(:mod:`workspaces.webhooks.addresses`: loopback, private, link-local and
reserved addresses refused unless WEBHOOK_ALLOW_PRIVATE) checked on the
request and on every redirect, the connection made to the address that was
checked, conditional headers sent, the body cut at a size limit."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urljoin

import urllib3

from workspaces.webhooks.addresses import Target, UnsafeUrl, addresses_checked, url_parse

USER_AGENT = "DaneshyarBot/1.0 (+https://github.com/daneshyar)"
TIMEOUT_SECONDS = 20.0
MAX_REDIRECTS = 5


class FetchFailed(Exception):
    """No answer: the address is refused, the host does not resolve, the
    connection failed or timed out, or the body is over the limit."""


@dataclass(frozen=True)
class Answer:
    status: int
    url: str  # after redirects
    body: bytes
    etag: str
    last_modified: str
    content_type: str


def _pool(target: Target, address: str) -> urllib3.HTTPConnectionPool:
    timeout = urllib3.Timeout(total=TIMEOUT_SECONDS)
    if target.scheme == "https":
        return urllib3.HTTPSConnectionPool(
            address, target.port, timeout=timeout, retries=False, server_hostname=target.host,
            assert_hostname=target.host,
        )  # fmt: skip
    return urllib3.HTTPConnectionPool(address, target.port, timeout=timeout, retries=False)


def _host_header(target: Target) -> str:
    host = f"[{target.host}]" if ":" in target.host else target.host
    default_port = 443 if target.scheme == "https" else 80
    return host if target.port == default_port else f"{host}:{target.port}"


def _get_once(url: str, headers: dict[str, str], max_bytes: int) -> tuple[urllib3.BaseHTTPResponse, bytes]:
    target = url_parse(url)
    address = addresses_checked(target)[0]
    with _pool(target, address) as pool:
        response = pool.urlopen(
            "GET",
            target.path,
            headers={**headers, "Host": _host_header(target), "User-Agent": USER_AGENT},
            redirect=False,
            retries=False,
            preload_content=False,
        )
        try:
            body = response.read(max_bytes + 1) if response.status == 200 else response.read(4096)
        finally:
            response.release_conn()
    if len(body) > max_bytes:
        raise FetchFailed(f"The page is larger than {max_bytes:,} bytes.")
    return response, body


def get(url: str, *, max_bytes: int, etag: str = "", last_modified: str = "") -> Answer:
    """GET ``url`` (following at most MAX_REDIRECTS redirects, each checked);
    a 304 when the validators sent still hold. :class:`UnsafeUrl` when an
    address is refused, :class:`FetchFailed` when there is no answer."""
    headers = {"Accept-Encoding": "identity"}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    for _ in range(MAX_REDIRECTS + 1):
        try:
            response, body = _get_once(url, headers, max_bytes)
        except UnsafeUrl:
            raise
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise FetchFailed(f"{type(exc).__name__}: {exc}"[:500]) from None
        location = response.headers.get("Location")
        if response.status in (301, 302, 303, 307, 308) and location:
            url = urljoin(url, location)
            continue
        return Answer(
            status=int(response.status),
            url=url,
            body=body,
            etag=response.headers.get("ETag", "")[:255],
            last_modified=response.headers.get("Last-Modified", "")[:64],
            content_type=response.headers.get("Content-Type", ""),
        )
    raise FetchFailed(f"More than {MAX_REDIRECTS} redirects.")
