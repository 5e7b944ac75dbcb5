"""An integrator's web site for the widget's browser tests: its own origin
(another port than the service's), a page that embeds the widget with one
``<script>`` tag and one element, and a ``/token`` route that mints end-user
tokens through the service's admin API with a key the browser never sees.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx


@dataclass
class Site:
    url: str
    token_requests: list[str]


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>An integrator's page</title>
<script src="{service}/static/daneshyar/chat.js" defer></script>
<style>body {{ font-family: sans-serif; margin: 24px; background: #f4f5f8; }}
h1 {{ font-size: 20px; max-width: 640px; margin: 0 auto 12px; }}
daneshyar-chat {{ max-width: 640px; margin: 0 auto; --daneshyar-height: 560px; }}</style></head>
<body><h1>Acme support</h1>
<daneshyar-chat workspace="{workspace}" {provider}
                chat-title="Ask Acme's manuals"></daneshyar-chat>
{script}</body></html>
"""
# The other way to give the widget its tokens: a function, set before the
# widget's script has run (the element is upgraded later).
FUNCTION_PROVIDER = """<script>
document.querySelector("daneshyar-chat").tokenProvider = async () =>
  (await fetch("/token", {method: "POST"})).json();
</script>
"""


@contextmanager
def host_site(
    *,
    service: str,
    workspace_id: str,
    admin_key: str,
    user: str,
    provider: str = "url",
    ttls: tuple[int, ...] = (600,),
    announce_in: int | None = None,
) -> Iterator[Site]:
    """Serve the integrator's site on a free port of 127.0.0.1 until the block ends.

    ``provider``: the widget gets tokens from the ``token-provider`` URL
    ("url") or a ``tokenProvider`` function ("function"). The n-th token
    lives ``ttls[n]`` seconds (the last repeats); ``announce_in`` tells the
    widget it expires in that many seconds instead of when it does.
    """
    token_requests: list[str] = []
    page = PAGE.format(
        service=html.escape(service),
        workspace=html.escape(workspace_id),
        provider='token-provider="/token"' if provider == "url" else "",
        script=FUNCTION_PROVIDER if provider == "function" else "",
    ).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?")[0] != "/":
                self._send(404, b"not found", "text/plain")
                return
            self._send(200, page, "text/html; charset=utf-8")

        def do_POST(self) -> None:
            if self.path != "/token":
                self._send(404, b"not found", "text/plain")
                return
            ttl = ttls[min(len(token_requests), len(ttls) - 1)]
            token_requests.append(self.path)
            # The integrator's server vouches for its signed-in user.
            minted = httpx.post(
                f"{service}/api/v1/workspaces/{workspace_id}/end-user-tokens/",
                headers={"X-API-Key": admin_key},
                json={"external_user_id": user, "ttl_seconds": ttl},
                timeout=30,
            )
            minted.raise_for_status()
            data = minted.json()["data"]
            expires_at = data["expires_at"]
            if announce_in is not None:
                expires_at = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=announce_in)).isoformat()
            body = json.dumps({"token": data["token"], "expires_at": expires_at}).encode()
            self._send(200, body, "application/json")

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Site(url=f"http://127.0.0.1:{server.server_port}", token_requests=token_requests)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
