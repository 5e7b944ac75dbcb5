"""The webhook endpoints' API: secrets shown once, rotation, the delivery
log, redelivery, tenancy, and the URLs refused (SSRF)."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from pytest_django import Settings

from tests.conftest import Tenant
from workspaces.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint, WebhookEvent
from workspaces.webhooks import signing
from workspaces.webhooks.events import webhook_event_emit

pytestmark = pytest.mark.django_db

RECEIVER = "http://127.0.0.1:9/hooks"


def _base(tenant: Tenant) -> str:
    return f"/api/v1/workspaces/{tenant.workspace.id}/webhooks/"


def _create(tenant: Tenant, **body: Any) -> dict[str, Any]:
    response = tenant.client().post(_base(tenant), {"url": RECEIVER, **body}, format="json")
    assert response.status_code == 201, response.json()
    data: dict[str, Any] = response.json()["data"]
    return data


def test_create_shows_the_secret_once_and_stores_it_encrypted(owner: Tenant) -> None:
    created = _create(owner, events=["resource.ready"], description="CRM")
    assert created["secret"].startswith("whsec_") and created["events"] == ["resource.ready"]
    assert created["enabled"] is True and created["url"] == RECEIVER
    endpoint = WebhookEndpoint.objects.get(id=created["id"])
    assert created["secret"] not in endpoint.secret
    assert signing.secret_decrypt(endpoint.secret) == created["secret"]
    listed = owner.client().get(_base(owner)).json()["data"]
    detail = owner.client().get(f"{_base(owner)}{created['id']}/").json()["data"]
    assert [item["id"] for item in listed["items"]] == [created["id"]]
    assert "secret" not in listed["items"][0] and "secret" not in detail
    assert created["secret"] not in str(listed) + str(detail)


def test_rotate_shows_a_new_secret_once(owner: Tenant) -> None:
    created = _create(owner)
    response = owner.client().post(f"{_base(owner)}{created['id']}/rotate-secret/")
    assert response.status_code == 201
    rotated = response.json()["data"]["secret"]
    assert rotated.startswith("whsec_") and rotated != created["secret"]
    endpoint = WebhookEndpoint.objects.get(id=created["id"])
    assert signing.secret_decrypt(endpoint.secret) == rotated


def test_patch_changes_what_is_sent_and_delete_removes_it(owner: Tenant) -> None:
    created = _create(owner)
    url = f"{_base(owner)}{created['id']}/"
    response = owner.client().patch(url, {"enabled": False, "events": ["feedback.created"]}, format="json")
    assert response.status_code == 200
    assert response.json()["data"]["enabled"] is False
    assert response.json()["data"]["events"] == ["feedback.created"]
    assert owner.client().delete(url).status_code == 204
    assert owner.client().get(url).status_code == 404


def test_delivery_log_is_paginated_and_redelivery_makes_a_new_delivery(owner: Tenant) -> None:
    created = _create(owner)
    for n in range(3):
        webhook_event_emit(
            workspace_id=owner.workspace.id,
            event_type=WebhookEvent.RESOURCE_READY,
            subject_id=f"r{n}",
            data={"n": n},
        )
    log = f"{_base(owner)}{created['id']}/deliveries/"
    first = owner.client().get(log, {"limit": 2}).json()["data"]
    second = owner.client().get(log, {"limit": 2, "cursor": first["next_cursor"]}).json()["data"]
    items = first["items"] + second["items"]
    assert [item["payload"]["data"]["n"] for item in items] == [2, 1, 0]
    assert second["next_cursor"] is None
    assert items[0]["status"] == "pending" and items[0]["attempts"] == 0
    assert items[0]["event_type"] == "resource.ready" and items[0]["event_id"].startswith("msg_")
    response = owner.client().post(f"{log}{items[2]['id']}/redeliver/")
    assert response.status_code == 202
    again = response.json()["data"]
    assert again["id"] != items[2]["id"] and again["event_id"] == items[2]["event_id"]
    assert again["status"] == "pending" and again["payload"] == items[2]["payload"]
    assert WebhookDelivery.objects.filter(endpoint_id=created["id"]).count() == 4


def test_events_go_only_to_enabled_endpoints_that_take_them(owner: Tenant) -> None:
    every = _create(owner)
    feedback_only = _create(owner, events=["feedback.created"])
    disabled = _create(owner, enabled=False)
    webhook_event_emit(
        workspace_id=owner.workspace.id, event_type=WebhookEvent.RESOURCE_READY, subject_id="r", data={}
    )
    endpoints = set(WebhookDelivery.objects.values_list("endpoint_id", flat=True))
    assert endpoints == {WebhookEndpoint.objects.get(id=every["id"]).id}
    assert feedback_only["id"] != disabled["id"]
    assert WebhookDelivery.objects.get().status == DeliveryStatus.PENDING


def test_another_organizations_endpoint_and_delivery_are_404(owner: Tenant, outsider: Tenant) -> None:
    created = _create(owner)
    webhook_event_emit(
        workspace_id=owner.workspace.id, event_type=WebhookEvent.RESOURCE_READY, subject_id="r", data={}
    )
    delivery = WebhookDelivery.objects.get()
    # The outsider's own workspace, the owner's endpoint and delivery ids.
    base = f"{_base(outsider)}{created['id']}/"
    client = outsider.client()
    assert client.get(base).status_code == 404
    assert client.patch(base, {"enabled": False}, format="json").status_code == 404
    assert client.post(f"{base}rotate-secret/").status_code == 404
    assert client.get(f"{base}deliveries/").status_code == 404
    assert client.post(f"{base}deliveries/{delivery.id}/redeliver/").status_code == 404
    assert client.delete(base).status_code == 404
    # The owner's workspace URL with the outsider's key.
    assert client.get(f"{_base(owner)}{created['id']}/").status_code == 404
    # Another endpoint's delivery under the owner's endpoint.
    other = _create(owner)
    assert (
        owner.client().post(f"{_base(owner)}{other['id']}/deliveries/{delivery.id}/redeliver/").status_code
        == 404
    )
    assert WebhookEndpoint.objects.get(id=created["id"]).enabled is True


def test_chat_keys_are_refused(owner: Tenant) -> None:
    assert owner.client("chat").get(_base(owner)).status_code == 403
    assert owner.client("chat").post(_base(owner), {"url": RECEIVER}, format="json").status_code == 403


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://hooks.example/", "Only http and https"),
        ("not a url", "Only http and https"),
        ("http:///path", "no host"),
        ("https://user:pw@hooks.example/", "user name"),
        ("http://127.0.0.1/hook", "loopback, private"),
        ("http://[::1]:8080/hook", "loopback, private"),
        ("http://169.254.169.254/latest/meta-data/", "loopback, private"),
        ("http://10.1.2.3/hook", "loopback, private"),
        ("http://192.168.0.10/hook", "loopback, private"),
        ("http://0.0.0.0/hook", "loopback, private"),
        ("http://[::ffff:127.0.0.1]/hook", "loopback, private"),
        ("http://localhost/hook", "loopback, private"),
    ],
)
def test_bad_and_private_urls_are_400(owner: Tenant, settings: Settings, url: str, why: str) -> None:
    settings.OUTBOUND_ALLOW_PRIVATE = False
    response = owner.client().post(_base(owner), {"url": url}, format="json")
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == "validation_error" and why in error["fields"]["url"][0]
    assert not WebhookEndpoint.objects.exists()


def test_a_public_name_that_resolves_to_a_private_address_is_refused(
    owner: Tenant, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.OUTBOUND_ALLOW_PRIVATE = False
    real = socket.getaddrinfo

    def resolve(host: str, *args: Any, **kwargs: Any) -> Any:
        if host == "hooks.example.com":  # a public name pointing inside
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.7", 443))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    response = owner.client().post(_base(owner), {"url": "https://hooks.example.com/in"}, format="json")
    assert response.status_code == 400
    created = _create_allowed(owner, settings)
    patched = owner.client().patch(
        f"{_base(owner)}{created}/", {"url": "https://hooks.example.com/in"}, format="json"
    )
    assert patched.status_code == 400


def _create_allowed(owner: Tenant, settings: Settings) -> str:
    settings.OUTBOUND_ALLOW_PRIVATE = True
    created = _create(owner)
    settings.OUTBOUND_ALLOW_PRIVATE = False
    return str(created["id"])


def test_bad_bodies_are_400(owner: Tenant) -> None:
    for body in ({}, {"url": 5}, {"url": RECEIVER, "events": ["nope"]}, {"url": RECEIVER, "enabled": "x"}):
        response = owner.client().post(_base(owner), body, format="json")
        assert response.status_code == 400, body
    created = _create(owner)
    response = owner.client().patch(f"{_base(owner)}{created['id']}/", {"events": "all"}, format="json")
    assert response.status_code == 400
    assert owner.client().get(f"{_base(owner)}not-a-uuid/").status_code == 404


def test_a_name_that_does_not_resolve_yet_is_accepted_and_checked_when_posted(
    owner: Tenant, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.OUTBOUND_ALLOW_PRIVATE = False

    def unresolvable(*args: Any, **kwargs: Any) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", unresolvable)
    created = _create(owner, url="https://later.example.com/in")
    assert created["url"] == "https://later.example.com/in"
