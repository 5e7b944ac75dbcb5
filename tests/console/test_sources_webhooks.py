"""The console's Sources and Webhooks pages: what they list, "Sync now" and
"Redeliver", and who may see and press them (docs/console.md, "Who sees
what")."""

from __future__ import annotations

import pytest
from django.utils import timezone

from resources.models import Source, SourceRun, SourceRunStatus
from resources.sources import services as sources
from tests.conftest import Tenant
from tests.staff import Staff, grant, make_staff
from workspaces.models import DeliveryStatus, WebhookDelivery, WebhookEvent
from workspaces.webhooks.events import webhook_event_emit
from workspaces.webhooks.services import webhook_create

pytestmark = pytest.mark.django_db


def _source(tenant: Tenant) -> Source:
    fields = sources.SourceFields(
        kind="sitemap", urls=["https://docs.example.org/sitemap.xml"], schedule_seconds=21600
    )
    return sources.source_create(workspace=tenant.workspace, fields=fields)


def _delivery(tenant: Tenant) -> WebhookDelivery:
    webhook_create(workspace=tenant.workspace, url="https://hooks.example.org/daneshyar")
    webhook_event_emit(
        workspace_id=tenant.workspace.id,
        event_type=WebhookEvent.RESOURCE_READY,
        subject_id="r1",
        data={"n": 1},
    )
    delivery = WebhookDelivery.objects.get(endpoint__workspace=tenant.workspace)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        attempts=3,
        last_status_code=503,
        last_error="The receiver answered 503.",
        last_attempt_at=timezone.now(),
    )
    return delivery


def test_the_sources_page_lists_sources_and_runs_with_their_counts(owner: Tenant, curator: Staff) -> None:
    source = _source(owner)
    SourceRun.objects.create(
        source=source,
        status=SourceRunStatus.PARTIAL,
        new=7,
        changed=2,
        unchanged=40,
        deleted=1,
        failed=3,
        skipped=5,
    )
    page = curator.client.get(f"/admin/console/{owner.workspace.id}/sources/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "https://docs.example.org/sitemap.xml" in html and "every 6 h" in html
    assert "<td>7</td><td>2</td><td>40</td><td>1</td><td>3</td><td>5</td>" in html
    assert "Sync now" in html


def test_sync_now_starts_a_run_and_is_refused_while_one_runs(owner: Tenant, curator: Staff) -> None:
    source = _source(owner)
    url = f"/admin/console/{owner.workspace.id}/sources/{source.id}/sync/"
    first = curator.client.post(url, follow=True)
    assert first.status_code == 200 and "Sync queued" in first.content.decode()
    again = curator.client.post(url, follow=True)
    assert "already running" in again.content.decode()
    assert SourceRun.objects.filter(source=source).count() == 1


def test_the_webhooks_page_shows_the_delivery_log_and_redelivers(owner: Tenant, curator: Staff) -> None:
    delivery = _delivery(owner)
    html = curator.client.get(f"/admin/console/{owner.workspace.id}/webhooks/").content.decode()
    assert "https://hooks.example.org/daneshyar" in html and "The receiver answered 503." in html
    assert delivery.event_id in html and "Redeliver" in html
    response = curator.client.post(
        f"/admin/console/{owner.workspace.id}/webhooks/deliveries/{delivery.id}/redeliver/"
    )
    assert response.status_code == 302
    copies = WebhookDelivery.objects.filter(event_id=delivery.event_id).exclude(pk=delivery.pk)
    assert [(c.status, c.attempts) for c in copies] == [(DeliveryStatus.PENDING, 0)]


def test_the_index_links_both_pages(owner: Tenant, curator: Staff) -> None:
    html = curator.client.get("/admin/console/").content.decode()
    assert f"/admin/console/{owner.workspace.id}/sources/" in html
    assert f"/admin/console/{owner.workspace.id}/webhooks/" in html


def test_another_organizations_pages_and_rows_are_404(
    owner: Tenant, outsider: Tenant, curator: Staff
) -> None:
    source, delivery = _source(outsider), _delivery(outsider)
    other = outsider.workspace.id
    assert curator.client.get(f"/admin/console/{other}/sources/").status_code == 404
    assert curator.client.get(f"/admin/console/{other}/webhooks/").status_code == 404
    assert curator.client.post(f"/admin/console/{other}/sources/{source.id}/sync/").status_code == 404
    # Their rows under the curator's own workspace: 404 too, and nothing done.
    mine = owner.workspace.id
    assert curator.client.post(f"/admin/console/{mine}/sources/{source.id}/sync/").status_code == 404
    assert (
        curator.client.post(f"/admin/console/{mine}/webhooks/deliveries/{delivery.id}/redeliver/").status_code
        == 404
    )
    assert not SourceRun.objects.exists()
    assert WebhookDelivery.objects.filter(event_id=delivery.event_id).count() == 1


def test_a_view_only_account_sees_the_pages_but_presses_nothing(owner: Tenant) -> None:
    viewer = make_staff("viewer", organization=owner.organization, permissions=False)
    grant(
        viewer.user,
        [
            ("resources", "view_source"),
            ("resources", "view_sourcerun"),
            ("workspaces", "view_webhookendpoint"),
            ("workspaces", "view_webhookdelivery"),
        ],
    )
    source, delivery = _source(owner), _delivery(owner)
    ws = owner.workspace.id
    assert "Sync now" not in viewer.client.get(f"/admin/console/{ws}/sources/").content.decode()
    assert "Redeliver</button>" not in viewer.client.get(f"/admin/console/{ws}/webhooks/").content.decode()
    assert viewer.client.post(f"/admin/console/{ws}/sources/{source.id}/sync/").status_code == 403
    assert (
        viewer.client.post(f"/admin/console/{ws}/webhooks/deliveries/{delivery.id}/redeliver/").status_code
        == 403
    )
    nobody = make_staff("nobody", organization=owner.organization, permissions=False)
    assert nobody.client.get(f"/admin/console/{ws}/sources/").status_code == 403
    assert nobody.client.get(f"/admin/console/{ws}/webhooks/").status_code == 403
