"""Webhook deliveries through the one way out (daneshyar/outbound/): a
receiver that trickles its answer (headers or body) is a failed attempt at
WEBHOOK_TIMEOUT_SECONDS (± 2 s); 6to4 and site-local addresses are refused
as an endpoint and at delivery time."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pytest_django import Settings

from tests.conftest import Tenant
from tests.resources.fixture_site import Site, serving
from workspaces.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint, WebhookEvent
from workspaces.webhooks import signing
from workspaces.webhooks.delivery import delivery_attempt
from workspaces.webhooks.events import webhook_event_emit
from workspaces.webhooks.services import webhook_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def trickling() -> Iterator[Site]:
    """A receiver whose /headers and /body answer a byte a second, for ever."""
    with serving(Site(trickle={"/headers": "headers", "/body": "body"})) as site:
        yield site


def _emit(tenant: Tenant) -> WebhookDelivery:
    ready = WebhookEvent.RESOURCE_READY
    webhook_event_emit(workspace_id=tenant.workspace.id, event_type=ready, subject_id="r1", data={"n": 1})
    return WebhookDelivery.objects.get()


@pytest.mark.parametrize("path", ["/headers", "/body"])
def test_a_trickling_receiver_is_a_failed_attempt_at_the_timeout(
    owner: Tenant, settings: Settings, trickling: Site, path: str
) -> None:
    settings.WEBHOOK_TIMEOUT_SECONDS = 3
    webhook_create(workspace=owner.workspace, url=trickling.url(path))
    delivery = _emit(owner)
    started = time.monotonic()
    delivery_attempt(delivery_id=delivery.id)
    assert abs(time.monotonic() - started - 3.0) < 2.0
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.PENDING, 1)
    assert delivery.last_status_code is None
    assert delivery.last_error == "DeadlineExceeded: No whole answer within 3 s."
    assert [requested for requested, _ in trickling.requests] == [path]


@pytest.mark.parametrize("host", ["2002:7f00:1::", "fec0::1"])
def test_6to4_and_site_local_addresses_are_refused_as_an_endpoint_and_at_delivery(
    owner: Tenant, settings: Settings, monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    settings.OUTBOUND_ALLOW_PRIVATE = False
    url = f"/api/v1/workspaces/{owner.workspace.id}/webhooks/"
    for address in (f"http://[{host}]/", f"https://[{host}]:8443/hooks"):
        answer = owner.client().post(url, {"url": address}, format="json")
        assert answer.status_code == 400, answer.json()
        assert "loopback, private" in answer.json()["error"]["fields"]["url"][0]
    # A name that pointed elsewhere when the endpoint was made, and now here.
    secret = signing.secret_encrypt(signing.secret_new())
    WebhookEndpoint.objects.create(workspace=owner.workspace, url="https://hooks.example/in", secret=secret)
    real_resolve = socket.getaddrinfo

    def resolve(name: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if name == "hooks.example":
            return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (host, port, 0, 0))]
        return real_resolve(name, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    delivery = _emit(owner)
    delivery_attempt(delivery_id=delivery.id)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.last_status_code) == (DeliveryStatus.PENDING, None)
    assert "loopback, private, link-local or reserved" in delivery.last_error
