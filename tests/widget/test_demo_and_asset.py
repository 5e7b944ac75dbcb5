"""The widget's file as the service serves it, and the demo page's switch."""

from __future__ import annotations

import gzip
import subprocess
from pathlib import Path

import jwt
import pytest
from django.core.management import call_command
from django.http import HttpResponseBase
from django.test import Client
from pytest_django import Settings

from daneshyar import settings as deployed
from tests.conftest import Tenant

ROOT = Path(__file__).resolve().parents[2]
WIDGET = ROOT / "widget" / "static" / "daneshyar" / "chat.js"
MAX_GZIPPED_BYTES = 50 * 1024


def test_the_widget_is_under_50_kb_gzipped() -> None:
    size = len(gzip.compress(WIDGET.read_bytes(), compresslevel=9))
    assert size < MAX_GZIPPED_BYTES, size


def test_the_widget_is_valid_javascript() -> None:
    """Node checks the syntax (the file is served as written: no build step)."""
    result = subprocess.run(["node", "--check", str(WIDGET)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_the_service_serves_the_widget_as_javascript(client: Client) -> None:
    response = client.get("/static/daneshyar/chat.js")
    assert response.status_code == 200
    content_type = response["Content-Type"].lower()
    assert content_type.startswith(("text/javascript", "application/javascript"))
    # Its texts include non-ASCII (Persian): the page's encoding must not matter.
    assert "utf-8" in content_type
    # Not a hashed name: a short cache lifetime, so a new version reaches pages within a minute.
    assert response["Cache-Control"] == "max-age=60, public"
    body = b"".join(response.streaming_content) if response.streaming else response.content  # type: ignore[attr-defined]
    assert b'customElements.define("daneshyar-chat"' in body


def test_after_collectstatic_the_widget_is_served_gzipped_to_who_accepts_it(
    settings: Settings, tmp_path: Path
) -> None:
    """What make run and the image serve: the files collectstatic wrote,
    with the compressed copy beside each (chat.js.gz), under the deployed
    settings (the suite's own serve the checkout's files: tests/settings.py)."""
    settings.STATIC_ROOT = tmp_path
    settings.WHITENOISE_USE_FINDERS = deployed.WHITENOISE_USE_FINDERS
    settings.WHITENOISE_AUTOREFRESH = deployed.WHITENOISE_AUTOREFRESH
    call_command("collectstatic", "--noinput", verbosity=0)
    assert (tmp_path / "daneshyar" / "chat.js.gz").exists()
    client = Client()  # its middleware is built now, with these settings
    response = client.get("/static/daneshyar/chat.js", HTTP_ACCEPT_ENCODING="gzip, deflate")
    assert response.status_code == 200
    assert response["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in response["Vary"]
    assert gzip.decompress(_body(response)) == WIDGET.read_bytes()
    plain = client.get("/static/daneshyar/chat.js")
    assert not plain.has_header("Content-Encoding") and _body(plain) == WIDGET.read_bytes()


def _body(response: HttpResponseBase) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content  # type: ignore[attr-defined]


@pytest.mark.django_db
def test_the_demo_page_is_404_unless_the_local_run_turns_it_on(client: Client, settings: Settings) -> None:
    settings.WIDGET_DEMO_WORKSPACE = None
    assert client.get("/widget/demo/").status_code == 404
    assert client.post("/widget/demo/token").status_code == 404


@pytest.mark.django_db
def test_the_demo_page_embeds_the_widget_for_the_demo_workspace(
    client: Client, settings: Settings, owner: Tenant
) -> None:
    settings.WIDGET_DEMO_WORKSPACE = str(owner.workspace.id)
    page = client.get("/widget/demo/?lang=fa&dir=rtl").content.decode()
    assert f'workspace="{owner.workspace.id}"' in page
    assert 'token-provider="/widget/demo/token"' in page and 'dir="rtl"' in page
    assert "/static/daneshyar/chat.js" in page and "dk_live_" not in page


@pytest.mark.django_db
def test_the_demo_token_is_one_end_user_s_and_works_on_the_end_user_routes(
    client: Client, settings: Settings, owner: Tenant
) -> None:
    settings.WIDGET_DEMO_WORKSPACE = str(owner.workspace.id)
    assert client.get("/widget/demo/token").status_code == 405
    first = client.post("/widget/demo/token")
    assert first.status_code == 200 and first["Cache-Control"].startswith("max-age=0")
    token = first.json()["token"]
    user = jwt.decode(token, options={"verify_signature": False})["sub"]
    assert user.startswith("demo-")
    # The same browser (session cookie) stays the same end user.
    again = jwt.decode(client.post("/widget/demo/token").json()["token"], options={"verify_signature": False})
    assert again["sub"] == user
    other = jwt.decode(
        Client().post("/widget/demo/token").json()["token"], options={"verify_signature": False}
    )
    assert other["sub"] != user
    sessions = Client().get(
        f"/api/v1/workspaces/{owner.workspace.id}/sessions/", HTTP_AUTHORIZATION=f"Bearer {token}"
    )
    assert sessions.status_code == 200 and sessions.json()["data"]["items"] == []
    admin = Client().get(
        f"/api/v1/workspaces/{owner.workspace.id}/resources/", HTTP_AUTHORIZATION=f"Bearer {token}"
    )
    assert admin.status_code in (401, 403)


def test_the_make_run_banner_links_the_demo_page() -> None:
    from daneshyar.devserver import _banner

    state = {"api_key": "dk_live_x", "admin_password": "pw", "workspace_id": "w"}
    assert "chat widget   http://127.0.0.1:8000/widget/demo/" in _banner("http://127.0.0.1:8000", state)
