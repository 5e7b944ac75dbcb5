"""The one way out to the network (daneshyar/outbound/), against real local
servers: the address rules (6to4, site-local, NAT64 and IPv4-mapped
included), one whole deadline however slowly a server trickles its headers
or its body, the size bound, redirects, TLS for the URL's name, and the
private-address setting under its two names."""

from __future__ import annotations

import datetime as dt
import importlib
import os
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from django.core.exceptions import ImproperlyConfigured
from pytest_django import Settings

from daneshyar.config import outbound as outbound_config
from daneshyar.outbound import DeadlineExceeded, OutboundFailed, OutboundSession, UnsafeUrl, connection
from daneshyar.outbound.addresses import address_refused
from tests.project import python_run
from tests.resources.fixture_site import Site, page, serving

SESSION = OutboundSession(timeout=3.0, user_agent="test")


@pytest.fixture
def site() -> Iterator[Site]:
    with serving(Site(pages={"/p/1": page(1)}, trickle_seconds=0.5)) as running:
        yield running


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1", "10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
        "0.0.0.0", "224.0.0.1",  # noqa: S104 "240.0.0.1", "::1", "::", "fe80::1", "fc00::1", "ff02::1",
        "2002:7f00:1::",  # 6to4 of 127.0.0.1
        "2002:808:808::",  # 6to4 of a public address: refused too (a relay may forward anywhere)
        "fec0::1", "fec0:1:2::3",  # site-local (deprecated, still routed inside some networks)
        "::ffff:127.0.0.1", "::ffff:10.0.0.1",  # IPv4-mapped
        "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe",  # NAT64 of 127.0.0.1 and of the metadata address
        "64:ff9b:1::1", "::127.0.0.1", "2001:db8::1", "fe80::1%eth0",
    ],
)  # fmt: skip
def test_the_rules_refuse_the_address(address: str) -> None:
    assert address_refused(address)


@pytest.mark.parametrize("address", ["8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"])
def test_the_rules_allow_a_global_address(address: str) -> None:
    assert not address_refused(address)


@pytest.mark.parametrize("host", ["2002:7f00:1::", "fec0::1", "64:ff9b::7f00:1", "::ffff:127.0.0.1"])
def test_a_url_naming_or_resolving_to_a_refused_address_is_never_connected_to(
    host: str, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.OUTBOUND_ALLOW_PRIVATE = False
    with pytest.raises(UnsafeUrl, match="loopback, private, link-local or reserved"):
        SESSION.get(f"http://[{host}]/", max_bytes=100)

    def resolve(name: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        assert name == "inside.example"
        return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (host, port, 0, 0))]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    with pytest.raises(UnsafeUrl):
        SESSION.post("https://inside.example/hook", body=b"{}", max_bytes=100)


@pytest.mark.parametrize("mode", ["headers", "body"])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_trickling_answer_is_given_up_at_the_whole_deadline(site: Site, mode: str, method: str) -> None:
    """A byte every half second: no single read ever waits long, yet the
    call ends at its deadline (3 s) ± 2 s, headers or body alike."""
    site.trickle["/slow"] = mode
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="within 3 s"):
        SESSION.request(method, site.url("/slow"), body=b"{}" if method == "POST" else None, max_bytes=10**6)
    assert abs(time.monotonic() - started - 3.0) < 2.0


def test_the_body_is_read_up_to_its_bound_and_an_answer_within_it_is_whole(site: Site) -> None:
    whole = SESSION.get(site.url("/p/1"), max_bytes=10**6)
    assert (whole.status, whole.complete, whole.body) == (200, True, page(1))
    assert whole.header("content-type").startswith("text/html")
    cut = SESSION.get(site.url("/p/1"), max_bytes=10)
    assert (cut.complete, cut.body) == (False, page(1)[:10])


def test_redirects_are_followed_only_when_asked_and_each_hop_is_checked(site: Site) -> None:
    site.redirects["/old"] = site.url("/p/1")
    site.redirects["/away"] = "ftp://127.0.0.1/file"
    assert SESSION.get(site.url("/old"), max_bytes=100).status == 302  # a webhook's: an answer
    follows = OutboundSession(timeout=3.0, user_agent="test", max_redirects=2)
    answer = follows.get(site.url("/old"), max_bytes=10**6)
    assert (answer.status, answer.url, answer.body) == (200, site.url("/p/1"), page(1))
    with pytest.raises(UnsafeUrl, match="Only http and https"):
        follows.get(site.url("/away"), max_bytes=100)
    site.redirects["/loop"] = site.url("/loop")
    with pytest.raises(OutboundFailed, match="More than 2 redirects"):
        follows.get(site.url("/loop"), max_bytes=100)


def test_a_name_is_resolved_once_and_the_checked_address_is_the_one_connected(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name that answers the check with one address and the connection
    with another (DNS rebinding) is only ever asked once."""
    port = int(site.base.rsplit(":", 1)[1])
    answers = iter(["127.0.0.1", "169.254.169.254"])

    def rebinding(name: str, *args: Any, **kwargs: Any) -> Any:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    answer = SESSION.get(f"http://rebind.example:{port}/p/1", max_bytes=10**6)
    assert (answer.status, answer.body) == (200, page(1))
    assert next(answers) == "169.254.169.254"  # never asked for


def test_a_refused_connection_is_a_failure_not_a_deadline() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(OutboundFailed, match="ConnectionRefusedError") as failed:
        SESSION.get(f"http://127.0.0.1:{port}/", max_bytes=100)
    assert not isinstance(failed.value, DeadlineExceeded) and time.monotonic() - started < 2


def _certificate(tmp_path: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


def test_tls_is_verified_for_the_urls_name_at_the_checked_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = _certificate(tmp_path)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    served = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    served.load_cert_chain(cert, key)
    server.socket = served.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    trusted = ssl.create_default_context(cafile=str(cert))
    monkeypatch.setattr(connection, "TLS_CONTEXT", trusted)
    port = server.server_address[1]
    try:
        assert SESSION.get(f"https://localhost:{port}/", max_bytes=100).body == b"ok"
        with pytest.raises(OutboundFailed, match="CERTIFICATE_VERIFY_FAILED"):
            SESSION.get(f"https://127.0.0.1:{port}/", max_bytes=100)  # not the certificate's name
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("outbound", "webhook", "allowed"),
    [(None, None, False), ("true", None, True), (None, "true", True), ("false", None, False),
     (None, "false", False), ("true", "true", True), ("false", "false", False)],
)  # fmt: skip
def test_the_private_address_setting_and_its_old_name(
    monkeypatch: pytest.MonkeyPatch, outbound: str | None, webhook: str | None, allowed: bool
) -> None:
    for name, value in (("OUTBOUND_ALLOW_PRIVATE", outbound), ("WEBHOOK_ALLOW_PRIVATE", webhook)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    try:
        assert importlib.reload(outbound_config).OUTBOUND_ALLOW_PRIVATE is allowed
    finally:
        monkeypatch.undo()
        importlib.reload(outbound_config)


def test_the_two_names_disagreeing_stop_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OUTBOUND_ALLOW_PRIVATE", "false")
    monkeypatch.setenv("WEBHOOK_ALLOW_PRIVATE", "true")
    try:
        with pytest.raises(ImproperlyConfigured, match="disagree"):
            importlib.reload(outbound_config)
    finally:
        monkeypatch.undo()
        importlib.reload(outbound_config)


def test_the_old_name_alone_still_allows_private_addresses_in_the_settings() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OUTBOUND_ALLOW_PRIVATE"}
    env.update(WEBHOOK_ALLOW_PRIVATE="true", DJANGO_SETTINGS_MODULE="daneshyar.settings")
    code = "import django; django.setup(); from django.conf import settings; "
    code += "print(settings.OUTBOUND_ALLOW_PRIVATE)"
    result = python_run(code, env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "True"
