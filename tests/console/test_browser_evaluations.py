"""The console's evaluation pages in a real browser (headless Chromium,
tests/browser.py): a small test set imported from a file, two runs started
from the page and run by a real Celery worker (the run's page follows it
without a click), the run's results, and the comparison of the two runs
with its chart. Saves the screenshots docs/console.md shows
(scripts/console_screenshots)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from celery.worker import WorkController
from pytest_django.live_server_helper import LiveServer

from evaluations.models import EvaluationRun
from tests.browser import log_in
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant
from tests.console.test_browser import _curator, _screenshot, _wait
from tests.staff import PASSWORD
from workspaces.models import DEFAULT_ANSWERABILITY_THRESHOLD, Workspace

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _run_to_its_end(browser: WebDriver) -> str:
    """Start a run from the set's page; the run's page reloads itself until it ends."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By

    def status(driver: WebDriver) -> str | None:
        try:  # the page may be reloading itself
            found = driver.execute_script(
                "const r = document.getElementById('run'); return r && r.dataset.status;"
            )
        except WebDriverException:
            return None
        return found if found in ("completed", "failed") else None

    _wait(browser).until(lambda d: d.find_elements(By.ID, "start-run"))
    browser.find_element(By.ID, "start-run").click()
    assert _wait(browser, timeout=120).until(status) == "completed"
    return str(browser.current_url)


def test_a_test_set_imported_run_and_compared_in_the_console(
    browser: WebDriver, live_server: LiveServer, owner: Tenant, celery_worker: WorkController, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    Workspace.objects.filter(pk=owner.workspace.pk).update(
        answerability_threshold=DEFAULT_ANSWERABILITY_THRESHOLD
    )
    _curator(owner)
    kettle = ingest_text(owner.workspace, "Kettle manual", "The kettle holds 1.7 litres of water.")
    holiday = ingest_text(
        owner.workspace, "Holiday policy", "Unused holiday days expire at the end of March."
    )
    lines = [
        {"question": "How many litres does the kettle hold?", "expected_resource_ids": [str(kettle.id)]},
        {"question": "When do unused holiday days expire?", "expected_resource_ids": [str(holiday.id)]},
        {"question": "What is the capital of Australia?", "expected_outcome": "no_answer"},
    ]
    upload = tmp_path / "small.jsonl"
    upload.write_text("\n".join(json.dumps(line) for line in lines))

    log_in(browser, live_server.url, "curator", PASSWORD)
    browser.get(f"{live_server.url}/admin/console/")
    browser.find_element(
        By.CSS_SELECTOR, f'tr[data-workspace="{owner.workspace.id}"] a[href$="/test-sets/"]'
    ).click()
    browser.find_element(By.ID, "id_name").send_keys("Small")
    browser.find_element(By.CSS_SELECTOR, "#test-set-create button").click()
    _wait(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#import-form input[type=file]"))
    browser.find_element(By.CSS_SELECTOR, "#import-form input[type=file]").send_keys(str(upload))
    browser.find_element(By.ID, "import-submit").click()
    _wait(browser).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#items tr[data-item]")) == 3)
    _screenshot(browser, "console-test-set")

    first_url = _run_to_its_end(browser)
    rows = browser.find_elements(By.CSS_SELECTOR, "#results tr[data-position]")
    assert [row.get_attribute("data-right") for row in rows] == ["yes", "yes", "yes"]
    # The second run after the threshold was raised: nothing is answerable.
    Workspace.objects.filter(pk=owner.workspace.pk).update(answerability_threshold=0.99)
    browser.find_element(By.PARTIAL_LINK_TEXT, "Test set Small").click()
    second_url = _run_to_its_end(browser)
    assert second_url != first_url and EvaluationRun.objects.filter(status="completed").count() == 2
    browser.find_element(By.CSS_SELECTOR, "#compare-form button").click()
    comparison = _wait(browser).until(lambda d: d.find_element(By.ID, "comparison"))
    assert comparison.get_attribute("data-worse") == "2" and comparison.get_attribute("data-better") == "0"
    worse = {li.text.split(" answered")[0] for li in browser.find_elements(By.CSS_SELECTOR, "#worse li")}
    assert worse == {"How many litres does the kettle hold?", "When do unused holiday days expire?"}
    bars = browser.find_elements(By.CSS_SELECTOR, "#chart-compare svg rect.bar")
    values = {bar.get_attribute("data-label"): bar.get_attribute("data-value") for bar in bars}
    assert values["Outcome right Baseline"] == "1.0" and float(values["Outcome right This run"] or 0) < 1
    _screenshot(browser, "console-evaluation-run", max_height=2200)
