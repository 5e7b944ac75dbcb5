"""The console's Sources and Webhooks pages in a real browser (headless
Chromium, tests/browser.py) against a live server, real PostgreSQL, the
real embedding model, a real Celery worker on Redis, a real local web site
(tests/resources/fixture_site.py) and a real webhook receiver
(tests/workspaces/webhook_receiver.py): "Sync now" runs a sync that ingests
the site's pages, the deliveries the receiver refused show their error and
next attempt, and "Redeliver" posts one again. Screenshots as in
tests/console/test_browser.py (scripts/console_screenshots: docs/images/)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from celery.worker import WorkController
from pytest_django import Settings
from pytest_django.live_server_helper import LiveServer

from resources.sources import services
from tests.browser import log_in
from tests.conftest import Tenant
from tests.console.test_browser import _curator, _screenshot, _wait
from tests.resources.fixture_site import Site, page, serving
from tests.staff import PASSWORD
from tests.workspaces.webhook_receiver import receiver
from workspaces.models import DeliveryStatus, WebhookDelivery
from workspaces.webhooks.services import webhook_create

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

# One run's row, read in one script call: its status and counts.
READ_RUN = """
    const row = document.querySelector("#runs tbody tr[data-run]");
    return row ? [row.dataset.status, Array.from(row.cells).slice(3, 9).map((c) => c.textContent)] : null;
"""


def test_sync_now_and_redeliver_in_the_console(
    browser: WebDriver,
    live_server: LiveServer,
    owner: Tenant,
    celery_worker: WorkController,
    settings: Settings,
) -> None:
    from selenium.webdriver.common.by import By

    settings.SOURCES_REQUEST_DELAY_MS = 0
    _curator(owner)
    pages = {f"/guide/{n}": page(n) for n in range(3)}
    with serving(Site(pages=pages)) as site, receiver(statuses=[500] * 50) as hooks:
        fields = services.SourceFields(
            kind="sitemap", urls=[site.url("/sitemap.xml")], schedule_seconds=21600
        )
        services.source_create(workspace=owner.workspace, fields=fields)
        webhook_create(workspace=owner.workspace, url=hooks.url, description="Integrator's receiver")

        log_in(browser, live_server.url, "curator", PASSWORD)
        browser.get(f"{live_server.url}/admin/console/")
        browser.find_element(
            By.CSS_SELECTOR, f"tr[data-workspace='{owner.workspace.id}'] a[href$='/sources/']"
        ).click()
        _wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, "button.sync-now"))
        browser.find_element(By.CSS_SELECTOR, "button.sync-now").click()

        def run_done(driver: WebDriver) -> list[object] | None:
            driver.refresh()
            run = driver.execute_script(READ_RUN)
            return run if run and run[0] != "running" else None

        status, counts = _wait(browser, timeout=240).until(run_done)
        assert (status, counts) == ("completed", ["3", "0", "0", "0", "0", "0"])
        _screenshot(browser, "console-sources")

        # Every delivery was refused (500): pending, its error and next attempt shown.
        _wait(browser, timeout=120).until(
            lambda d: (
                WebhookDelivery.objects.filter(endpoint__workspace=owner.workspace, attempts__gte=1).count()
                == 4
            )
        )
        browser.get(f"{live_server.url}/admin/console/{owner.workspace.id}/webhooks/")
        errors = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#deliveries td.last-error")]
        assert errors == ["The receiver answered 500."] * 4
        hooks.statuses.clear()  # the receiver is fixed: the redelivery is accepted
        completed = browser.find_element(By.XPATH, "//tr[td[contains(., 'source.sync.completed')]]")
        completed.find_element(By.CSS_SELECTOR, "button.redeliver").click()

        def delivered(driver: WebDriver) -> bool:
            driver.refresh()
            rows = driver.find_elements(By.CSS_SELECTOR, "#deliveries tr[data-status='delivered']")
            return len(rows) == 1

        _wait(browser, timeout=60).until(delivered)
        copy = WebhookDelivery.objects.get(status=DeliveryStatus.DELIVERED)
        assert copy.event_type == "source.sync.completed" and copy.attempts == 1
        _screenshot(browser, "console-webhooks")
