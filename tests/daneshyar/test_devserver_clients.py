"""``make run`` (daneshyar/devserver.py) as a new user's client meets it:
gunicorn on a Unix socket behind daneshyar/devproxy.py, the deployed
settings (daneshyar.settings, not the suite's), the demo tenant. One start
for the module: the admin login's lockout, a JSON body over the limit, an
upload refused at the door, the widget's file compressed, the demo's
documents.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.daneshyar.test_devserver import ctrl_c_and_wait, start
from tests.slow_clients import free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
WIDGET = ROOT / "widget" / "static" / "daneshyar" / "chat.js"


@dataclass(frozen=True)
class Run:
    base: str
    state: dict[str, str]

    @property
    def workspace(self) -> str:
        return f"{self.base}/api/v1/workspaces/{self.state['workspace_id']}"

    @property
    def headers(self) -> dict[str, str]:
        return {"X-API-Key": self.state["api_key"]}


@pytest.fixture(scope="module")
def run() -> Iterator[Run]:
    data_dir = Path(tempfile.mkdtemp(prefix="dsy-run-"))
    port = free_port()
    # The deployed settings, and an uploads bucket of one document a minute.
    process = start(
        port, data_dir, DJANGO_SETTINGS_MODULE="daneshyar.settings", RATE_LIMIT_UPLOADS_PER_MINUTE="1"
    )
    try:
        state = json.loads((data_dir / "demo.json").read_text())
        yield Run(f"http://127.0.0.1:{port}", state)
    finally:
        ctrl_c_and_wait(process)
        shutil.rmtree(data_dir, ignore_errors=True)


def wrong_password(run: Run, forged: str) -> int:
    """One attempt at the admin login from a new connection (a new browser),
    with a forwarded address of the client's own choosing."""
    forged_headers = {"X-Forwarded-For": forged, "X-Real-IP": forged}
    with requests.Session() as browser:
        page = browser.get(f"{run.base}/admin/login/", headers=forged_headers, timeout=30)
        match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert match, page.status_code
        form = {"csrfmiddlewaretoken": match[1], "username": "admin", "password": "not-the-password"}
        response = browser.post(
            f"{run.base}/admin/login/?next=/admin/",
            data=form,
            headers=forged_headers,
            allow_redirects=False,
            timeout=30,
        )
        return response.status_code


def test_fifteen_wrong_passwords_are_locked_out_from_the_sixth_on(run: Run) -> None:
    """ADMIN_LOGIN_FAILURE_LIMIT is 5: the fifth failure locks the pair
    (django-axes answers that attempt with the lockout already), whatever
    address each attempt claims in X-Forwarded-For or X-Real-IP."""
    statuses = [wrong_password(run, f"81.2.69.{i}") for i in range(15)]
    assert statuses == [200] * 4 + [429] * 11, statuses


def test_a_json_body_over_the_limit_is_413_in_the_envelope(run: Run) -> None:
    body = b'{"name": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    headers = {**run.headers, "Content-Type": "application/json"}
    response = requests.post(f"{run.base}/api/v1/workspaces/", data=body, headers=headers, timeout=60)
    assert response.status_code == 413
    assert response.json()["status"] == "error"
    assert response.json()["error"]["code"] == "payload_too_large"


def test_a_batch_refused_at_the_door_is_429_read_whole(run: Run) -> None:
    first = requests.post(
        f"{run.workspace}/resources/",
        json={"title": "Note", "text": "A short note."},
        headers=run.headers,
        timeout=60,
    )
    assert first.status_code == 202, first.text
    batch: list[dict[str, Any]] = [{"title": f"Page {i}", "text": "word " * 100_000} for i in range(8)]
    response = requests.post(f"{run.workspace}/resources/batch/", json=batch, headers=run.headers, timeout=60)
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "rate_limited" and int(response.headers["Retry-After"]) > 0


def test_the_widget_is_served_gzipped(run: Run) -> None:
    response = requests.get(
        f"{run.base}/static/daneshyar/chat.js", headers={"Accept-Encoding": "gzip"}, timeout=30
    )
    assert response.status_code == 200
    assert response.headers["Content-Encoding"] == "gzip"
    assert int(response.headers["Content-Length"]) < WIDGET.stat().st_size / 2
    assert response.content == WIDGET.read_bytes()  # requests decompresses it


def test_the_demo_workspace_has_its_manuals_and_asks_which_one(run: Run) -> None:
    deadline = time.monotonic() + 180
    while True:
        page = requests.get(f"{run.workspace}/resources/", headers=run.headers, timeout=30)
        listed = page.json()["data"]["items"]
        ready = sorted(r["title"] for r in listed if r["status"] == "ready")
        if {"Kettle K1", "Toaster T2"} <= set(ready):
            break
        assert time.monotonic() < deadline, listed
        time.sleep(1)
    turn = requests.post(
        f"{run.workspace}/chat/",
        json={"external_user_id": "visitor", "message": "How long is the warranty?"},
        headers=run.headers,
        timeout=120,
    )
    reply = turn.json()["data"]["assistant_message"]
    assert reply["response"]["type"] == "form"
    assert sorted(reply["response"]["form"]["fields"][0]["options"]) == ["Kettle K1", "Toaster T2"]
