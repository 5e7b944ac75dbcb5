"""A real local web site for the web source tests: a threading HTTP server
serving generated pages, a sitemap of them (or a sitemap index), ETags that
answer conditional requests with 304, switches to take it down, and paths
that trickle their answer (its headers, or its body) a byte at a time."""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


@dataclass
class Site:
    pages: dict[str, bytes] = field(default_factory=dict)
    robots: bytes | None = None
    # Every path answers this status (a site down), when set.
    down: int | None = None
    # Paths answering a redirect to another URL.
    redirects: dict[str, str] = field(default_factory=dict)
    index: bool = False
    base: str = ""
    requests: list[tuple[str, str]] = field(default_factory=list)  # (path, If-None-Match)
    # When each request came (time.monotonic()), in the order of ``requests``.
    times: list[float] = field(default_factory=list)
    # Paths that trickle, "headers" or "body", a byte every ``trickle_seconds``.
    trickle: dict[str, str] = field(default_factory=dict)
    trickle_seconds: float = 1.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, path: str) -> str:
        return self.base + path

    def sitemap(self, paths: list[str]) -> bytes:
        entries = "".join(f"<url><loc>{self.url(p)}</loc></url>" for p in paths)
        return f'<?xml version="1.0"?><urlset xmlns="{SITEMAP_NS}">{entries}</urlset>'.encode()

    def answer(self, path: str) -> tuple[int, bytes, dict[str, str]]:
        if self.down is not None:
            return self.down, b"down", {}
        if path in self.redirects:
            return 302, b"", {"Location": self.redirects[path]}
        if path == "/robots.txt":
            return (404, b"", {}) if self.robots is None else (200, self.robots, {})
        paths = sorted(self.pages)
        if path == "/sitemap.xml" and self.index:
            locs = "".join(f"<sitemap><loc>{self.url(f'/sitemap-{n}.xml')}</loc></sitemap>" for n in (1, 2))
            body = f'<sitemapindex xmlns="{SITEMAP_NS}">{locs}</sitemapindex>'.encode()
            return 200, body, {}
        if path == "/sitemap.xml":
            return 200, self.sitemap(paths), {}
        if path in ("/sitemap-1.xml", "/sitemap-2.xml"):
            half = len(paths) // 2
            return 200, self.sitemap(paths[:half] if path.endswith("1.xml") else paths[half:]), {}
        if path not in self.pages:
            return 404, b"not found", {}
        body = self.pages[path]
        return 200, body, {"ETag": f'"{hashlib.sha256(body).hexdigest()[:16]}"'}


def _trickled(wfile: Any, mode: str, seconds: float) -> None:
    """An answer that never ends: a byte every ``seconds`` (until the client goes)."""
    head = b"HTTP/1.1 200 OK\r\n"
    if mode == "body":
        head += b"Content-Type: text/html\r\nContent-Length: 100000\r\n\r\n<html>"
    with contextlib.suppress(OSError):
        wfile.write(head)
        for _ in range(3600):
            time.sleep(seconds)
            wfile.write(b"x" if mode == "headers" else b" ")


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            with site.lock:
                site.requests.append((path, self.headers.get("If-None-Match", "")))
                site.times.append(time.monotonic())
                status, body, headers = site.answer(path)
            if path in site.trickle:
                _trickled(self.wfile, site.trickle[path], site.trickle_seconds)
                return
            if status == 200 and headers.get("ETag") and self.headers.get("If-None-Match") == headers["ETag"]:
                status, body = 304, b""
            self.send_response(status)
            content_type = "application/xml" if path.endswith(".xml") else "text/html; charset=utf-8"
            self.send_header("Content-Type", "text/plain" if path == "/robots.txt" else content_type)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET  # a webhook receiver, for the outbound tests

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def serving(site: Site) -> Iterator[Site]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(site))
    site.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()


def page(n: int, edition: int = 1) -> bytes:
    return (
        f"<html><head><title>Page {n}</title></head><body><main><h1>Page {n}</h1>"
        f"<p>Article {n}, edition {edition}: the opening hours of branch {n} are "
        f"{8 + n % 3} to {17 + n % 4}.</p></main></body></html>"
    ).encode()


def allow_local_site(settings: Any) -> None:
    """Web sources may fetch a fixture site: it is on 127.0.0.1, and it is
    not asked to be paused between requests."""
    settings.OUTBOUND_ALLOW_PRIVATE = True
    settings.SOURCES_REQUEST_DELAY_MS = 0
