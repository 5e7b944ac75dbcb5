"""nginx in front of a test server, with the deployment's own configuration
(deploy/nginx.conf): the compose topology, proxy + gunicorn, on this machine.

Needs the ``nginx`` binary (Debian's ``nginx-light`` or ``nginx``; scripts/test
installs it when it may). Without it the test is skipped on a developer
machine and fails under CI (tests/parts.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.parts import part_missing
from tests.slow_clients import free_port

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "deploy" / "nginx.conf"


def nginx_binary() -> str:
    found = os.environ.get("NGINX_BINARY") or shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(found).exists():
        part_missing("nginx is not installed (apt-get install nginx-light)")
    return found


def site_config(upstream: str, port: int) -> str:
    """deploy/nginx.conf with the compose names replaced: gunicorn at
    ``upstream`` (host:port) instead of ``web:8000``, listening on ``port``."""
    text = CONFIG.read_text()
    listen = f"listen 127.0.0.1:{port};"
    for old, new in (("server web:8000;", f"server {upstream};"), ("listen 8080;", listen)):
        assert text.count(old) == 1, f"deploy/nginx.conf should say {old!r} once"
        text = text.replace(old, new)
    return text


@contextmanager
def nginx_in_front(upstream: str) -> Iterator[int]:
    """nginx on a free port before ``upstream``; yields the port."""
    binary = nginx_binary()
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="daneshyar-nginx-") as prefix:
        root = Path(prefix)
        (root / "site.conf").write_text(site_config(upstream, port))
        temp = {name: root / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
        # nginx started as root runs its workers as nobody: they must reach these.
        root.chmod(0o755)
        for path in temp.values():
            path.mkdir(mode=0o777)
            path.chmod(0o777)
        (root / "nginx.conf").write_text(
            f"""
daemon off;
worker_processes 1;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
events {{ worker_connections 2048; }}
http {{
    access_log off;
    client_body_temp_path {temp["body"]};
    proxy_temp_path {temp["proxy"]};
    fastcgi_temp_path {temp["fastcgi"]};
    uwsgi_temp_path {temp["uwsgi"]};
    scgi_temp_path {temp["scgi"]};
    include {root}/site.conf;
}}
"""
        )
        command = [binary, "-p", prefix, "-e", str(root / "error.log"), "-c", str(root / "nginx.conf")]
        check = subprocess.run([*command, "-t"], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_listening(process, port, root / "error.log")
            yield port
        finally:
            process.terminate()
            process.wait(timeout=30)


def _wait_listening(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    import socket

    deadline = time.monotonic() + 20
    while True:
        if process.poll() is not None:
            raise AssertionError(log.read_text() if log.exists() else "nginx exited")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, "nginx did not start"
            time.sleep(0.1)
