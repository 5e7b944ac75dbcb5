"""Webhook deliveries posted to a real local receiver: signatures, retries,
order per subject, the SSRF rule at delivery, and the events emitted by
ingestion, deletion and feedback."""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid

import pytest
from celery.worker import WorkController
from django.utils import timezone
from pytest_django import Settings

from chat.services.feedback import feedback_upsert
from resources import ingestion, services
from resources.models import Resource
from tests.conftest import Tenant
from tests.transcripts.factories import conversation
from tests.worker import wait_for
from tests.workspaces.webhook_receiver import receiver, signature_verifies
from workspaces.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint, WebhookEvent
from workspaces.webhooks import signing
from workspaces.webhooks.delivery import deliveries_due, delivery_attempt, max_attempts, retry_delays
from workspaces.webhooks.events import webhook_event_emit
from workspaces.webhooks.services import webhook_create

pytestmark = pytest.mark.django_db


def test_signature_matches_the_standard_webhooks_test_vector() -> None:
    # The example of the Standard Webhooks specification (and its reference libraries' tests).
    value = signing.signature(
        secret="whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        message_id="msg_p5jXN8AQM9LWM0D4loKWxJek",
        timestamp=1614265330,
        body=b'{"test": 2432232314}',
    )
    assert value == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def _emit(tenant: Tenant, subject: str = "r1", n: int = 0) -> None:
    webhook_event_emit(
        workspace_id=tenant.workspace.id,
        event_type=WebhookEvent.RESOURCE_READY,
        subject_id=subject,
        data={"resource_id": subject, "n": n},
    )


def _make_due(delivery: WebhookDelivery) -> None:
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())


def test_a_delivery_reaches_the_receiver_signed(owner: Tenant) -> None:
    with receiver() as hooks:
        secret = webhook_create(workspace=owner.workspace, url=hooks.url).secret
        _emit(owner)
        delivery = WebhookDelivery.objects.get()
        delivery_attempt(delivery_id=delivery.id)
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED and delivery.attempts == 1
    assert delivery.last_status_code == 200 and delivery.last_error == "" and delivery.delivered_at
    [got] = hooks.received
    assert got.path == "/hooks/daneshyar?source=test"
    assert got.headers["webhook-id"] == delivery.event_id
    assert abs(int(got.headers["webhook-timestamp"]) - timezone.now().timestamp()) < 60
    assert got.headers["content-type"] == "application/json"
    assert signature_verifies(secret, got)
    body = json.loads(got.body)
    assert body["type"] == "resource.ready" and body["data"] == {"resource_id": "r1", "n": 0}
    assert body["timestamp"].endswith("Z")
    # Another secret does not verify it.
    assert not signature_verifies(signing.secret_new(), got)


def test_a_500_is_retried_with_backoff_then_delivered(owner: Tenant) -> None:
    with receiver(statuses=[500, 503]) as hooks:
        webhook_create(workspace=owner.workspace, url=hooks.url)
        _emit(owner)
        delivery = WebhookDelivery.objects.get()
        before = timezone.now()
        delivery_attempt(delivery_id=delivery.id)
        delivery.refresh_from_db()
        assert delivery.status == DeliveryStatus.PENDING and delivery.attempts == 1
        assert delivery.last_status_code == 500 and "500" in delivery.last_error
        assert delivery.next_attempt_at is not None
        wait = (delivery.next_attempt_at - before).total_seconds()
        assert retry_delays()[0] - 1 <= wait <= retry_delays()[0] + 5
        # Not due yet: nothing is posted.
        assert deliveries_due() == []
        delivery_attempt(delivery_id=delivery.id)
        assert len(hooks.received) == 1
        # Due: the sweep finds it; the second attempt gets 503, the third 200.
        assert deliveries_due(now=timezone.now() + dt.timedelta(seconds=retry_delays()[0] + 1)) == [
            delivery.id
        ]
        _make_due(delivery)
        delivery_attempt(delivery_id=delivery.id)
        delivery.refresh_from_db()
        assert delivery.attempts == 2 and delivery.last_status_code == 503
        assert delivery.next_attempt_at is not None
        assert (delivery.next_attempt_at - timezone.now()).total_seconds() > retry_delays()[1] - 5
        _make_due(delivery)
        delivery_attempt(delivery_id=delivery.id)
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED and delivery.attempts == 3
    assert len({r.headers["webhook-id"] for r in hooks.received}) == 1 and len(hooks.received) == 3


def test_a_delivery_fails_when_its_attempts_run_out(owner: Tenant) -> None:
    with receiver(statuses=[500] * max_attempts()) as hooks:
        webhook_create(workspace=owner.workspace, url=hooks.url)
        _emit(owner)
        delivery = WebhookDelivery.objects.get()
        for _ in range(max_attempts()):
            _make_due(delivery)
            delivery_attempt(delivery_id=delivery.id)
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED and delivery.attempts == max_attempts()
    assert delivery.next_attempt_at is None and len(hooks.received) == max_attempts()
    assert sum(retry_delays()) > 20 * 3600  # retried over about a day


def test_deliveries_about_one_subject_arrive_in_order(owner: Tenant) -> None:
    # r2's delivery gets 200, then r1's first one 500.
    with receiver(statuses=[200, 500]) as hooks:
        webhook_create(workspace=owner.workspace, url=hooks.url)
        _emit(owner, "r1", 1)
        _emit(owner, "r1", 2)
        _emit(owner, "r2", 3)
        first, second, other = WebhookDelivery.objects.order_by("created_at")
        # The later one waits while the first is pending (even when it is tried first).
        assert delivery_attempt(delivery_id=second.id) is None
        second.refresh_from_db()
        assert second.attempts == 0 and hooks.received == []
        # Another subject does not wait.
        delivery_attempt(delivery_id=other.id)
        # The first fails once (500) and keeps the second waiting.
        assert delivery_attempt(delivery_id=first.id) is None
        _make_due(first)
        assert delivery_attempt(delivery_id=second.id) is None
        # Delivered, it names the one that waited for it.
        assert delivery_attempt(delivery_id=first.id) == second.id
        delivery_attempt(delivery_id=second.id)
    order = [json.loads(r.body)["data"]["n"] for r in hooks.received]
    assert order == [3, 1, 1, 2]
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {DeliveryStatus.DELIVERED}


def test_the_sweep_skips_deliveries_waiting_for_an_earlier_one(owner: Tenant) -> None:
    """A subject's later deliveries wait for its first: the sweep leaves them
    to be queued when it ends, so they never crowd out other due ones."""
    webhook_create(workspace=owner.workspace, url="http://127.0.0.1:9/")
    for n in range(3):
        _emit(owner, subject="blocked", n=n)
    _emit(owner, subject="other")
    first, *waiting = WebhookDelivery.objects.filter(subject_id="blocked").order_by("created_at")
    other = WebhookDelivery.objects.get(subject_id="other")
    assert deliveries_due() == [first.id, other.id]
    # The first waits for its retry: its followers are still not due.
    later = timezone.now() + dt.timedelta(hours=1)
    WebhookDelivery.objects.filter(pk=first.pk).update(next_attempt_at=later)
    assert deliveries_due() == [other.id]
    WebhookDelivery.objects.filter(pk=first.pk).update(status=DeliveryStatus.DELIVERED)
    assert deliveries_due() == [waiting[0].id, other.id]


def test_redirects_are_not_followed(owner: Tenant) -> None:
    with receiver(statuses=[302]) as hooks:
        webhook_create(workspace=owner.workspace, url=hooks.url)
        _emit(owner)
        delivery = WebhookDelivery.objects.get()
        delivery_attempt(delivery_id=delivery.id)
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.PENDING and delivery.last_status_code == 302
    assert len(hooks.received) == 1


def test_a_private_address_is_refused_at_delivery_too(owner: Tenant, settings: Settings) -> None:
    with receiver() as hooks:
        webhook_create(workspace=owner.workspace, url=hooks.url)
        _emit(owner)
        settings.OUTBOUND_ALLOW_PRIVATE = False
        delivery = WebhookDelivery.objects.get()
        delivery_attempt(delivery_id=delivery.id)
    delivery.refresh_from_db()
    assert hooks.received == []
    assert delivery.status == DeliveryStatus.PENDING and delivery.last_status_code is None
    assert "loopback, private" in delivery.last_error


def test_an_unreachable_receiver_is_a_failed_attempt(owner: Tenant) -> None:
    with receiver() as hooks:
        url = hooks.url
    webhook_create(workspace=owner.workspace, url=url)  # the server is gone: connection refused
    _emit(owner)
    delivery = WebhookDelivery.objects.get()
    delivery_attempt(delivery_id=delivery.id)
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.PENDING and delivery.attempts == 1
    assert delivery.last_error and delivery.last_status_code is None


def test_a_lost_worker_leaves_the_delivery_to_the_sweep(owner: Tenant) -> None:
    """A claimed attempt whose worker died: due again after its deadline."""
    webhook_create(workspace=owner.workspace, url="http://127.0.0.1:9/")
    _emit(owner)
    delivery = WebhookDelivery.objects.get()
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        attempts=1, next_attempt_at=timezone.now() + dt.timedelta(seconds=70)
    )
    assert deliveries_due() == []
    assert deliveries_due(now=timezone.now() + dt.timedelta(seconds=71)) == [delivery.id]


def test_a_resource_becoming_ready_or_failed_or_deleted_emits_its_events(owner: Tenant) -> None:
    endpoint = webhook_create(workspace=owner.workspace, url="http://127.0.0.1:9/").endpoint
    upload = owner.client().post(
        f"/api/v1/workspaces/{owner.workspace.id}/resources/",
        {"title": "Refunds", "text": "Refunds are paid within 14 days of the return."},
        format="json",
    )
    assert upload.status_code == 202, upload.json()
    resource_id = uuid.UUID(upload.json()["data"]["id"])
    assert not WebhookDelivery.objects.exists()
    ingestion.resource_ingest(resource_id=resource_id)
    ready = WebhookDelivery.objects.get(endpoint=endpoint)
    assert ready.event_type == WebhookEvent.RESOURCE_READY and ready.subject_id == str(resource_id)
    assert ready.payload["type"] == "resource.ready"
    assert ready.payload["data"]["resource_id"] == str(resource_id)
    assert ready.payload["data"]["status"] == "ready" and ready.payload["data"]["passage_count"] >= 1
    ingestion.resource_fail(resource_id=resource_id, code="parse_failed", message="Unreadable.")
    failed = WebhookDelivery.objects.get(event_type=WebhookEvent.RESOURCE_FAILED)
    assert failed.payload["data"]["error_code"] == "parse_failed"
    services.resource_delete(resource=Resource.objects.get(pk=resource_id))
    deleted = WebhookDelivery.objects.get(event_type=WebhookEvent.RESOURCE_DELETED)
    assert deleted.payload["data"]["status"] == "deleted"
    ordered = WebhookDelivery.objects.order_by("created_at").values_list("event_type", flat=True)
    assert list(ordered) == ["resource.ready", "resource.failed", "resource.deleted"]


def test_deletions_confirmed_through_the_sync_api_emit_resource_deleted(owner: Tenant) -> None:
    endpoint = webhook_create(workspace=owner.workspace, url="http://127.0.0.1:9/").endpoint
    base = f"/api/v1/workspaces/{owner.workspace.id}"
    ids = []
    for external_id in ("page-1", "page-2"):
        upload = owner.client().post(
            f"{base}/resources/",
            {"title": external_id, "text": f"The text of {external_id}.", "external_id": external_id},
            format="json",
        )
        assert upload.status_code == 202, upload.json()
        ids.append(upload.json()["data"]["id"])
    gone = owner.client().post(f"{base}/sync/delete/", {"external_ids": ["page-1", "page-2"]}, format="json")
    assert gone.status_code == 200, gone.json()
    deleted = WebhookDelivery.objects.filter(endpoint=endpoint, event_type=WebhookEvent.RESOURCE_DELETED)
    assert sorted(d.subject_id for d in deleted) == sorted(ids)
    assert all(d.payload["data"]["status"] == "deleted" for d in deleted)


def test_new_feedback_emits_feedback_created_once(owner: Tenant) -> None:
    webhook_create(workspace=owner.workspace, url="http://127.0.0.1:9/", events=["feedback.created"])
    session, messages = conversation(owner.workspace, external_user_id="alice")
    for rating in ("up", "down"):
        feedback_upsert(
            workspace=owner.workspace,
            session_id=session.id,
            message_id=messages[1].id,
            external_user_id="alice",
            rating=rating,
            comment="Helpful",
        )
    created = WebhookDelivery.objects.get()
    assert created.event_type == WebhookEvent.FEEDBACK_CREATED
    assert created.payload["data"]["rating"] == "up" and created.payload["data"]["comment"] == "Helpful"
    assert created.payload["data"]["message_id"] == str(messages[1].id)


def test_a_broken_outbox_never_fails_the_change(owner: Tenant, monkeypatch: pytest.MonkeyPatch) -> None:
    webhook_create(workspace=owner.workspace, url="http://127.0.0.1:9/")

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("outbox down")

    monkeypatch.setattr(WebhookDelivery.objects, "bulk_create", broken)
    _emit(owner)
    assert not WebhookDelivery.objects.exists()
    assert WebhookEndpoint.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_worker_posts_resource_ready_after_ingestion(
    owner: Tenant, celery_worker: WorkController
) -> None:
    """End to end: upload, the worker ingests, the outbox row is queued on
    commit, and the worker posts it, signed, to a real receiver."""
    with receiver() as hooks:
        secret = webhook_create(workspace=owner.workspace, url=hooks.url).secret
        upload = owner.client().post(
            f"/api/v1/workspaces/{owner.workspace.id}/resources/",
            {"title": "Shipping", "text": "Parcels ship within two working days."},
            format="json",
        )
        assert upload.status_code == 202
        resource = wait_for(upload.json()["data"]["id"])
        assert resource.status == "ready"
        deadline = time.monotonic() + 60
        while not hooks.received and time.monotonic() < deadline:
            time.sleep(0.2)
    [got] = hooks.received
    assert signature_verifies(secret, got)
    assert json.loads(got.body)["data"]["resource_id"] == str(resource.id)
    delivery = WebhookDelivery.objects.get()
    for _ in range(50):  # the outcome is recorded just after the answer
        delivery.refresh_from_db()
        if delivery.status == DeliveryStatus.DELIVERED:
            break
        time.sleep(0.1)
    assert delivery.status == DeliveryStatus.DELIVERED
