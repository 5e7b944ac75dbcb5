"""The admin transcript viewer in a real browser: headless Chromium driven by Selenium.

Needs Debian's ``chromium`` and ``chromium-driver`` packages (/usr/bin/chromium,
/usr/bin/chromedriver) and the ``selenium`` pip package. Both paths are given
explicitly, so Selenium Manager never looks for or downloads a browser. The
test is skipped only on a developer machine without them; under CI it fails.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User

from tests.conftest import Tenant
from tests.transcripts.factories import answer_response, conversation, feedback

CHROMIUM = os.environ.get("CHROMIUM_BINARY", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER_BINARY", "/usr/bin/chromedriver")
ARTIFACTS = Path(settings.BASE_DIR) / "artifacts"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1600",
]


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the selenium package is not installed (pip install selenium)"
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (os.path.exists(path) or shutil.which(path)):
            return f"{path} is absent (apt-get install chromium chromium-driver)"
    return None


@pytest.fixture
def browser() -> Iterator[Any]:
    reason = _missing()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"Browser test cannot run under CI: {reason}")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.mark.django_db(transaction=True)
def test_staff_logs_in_and_reads_a_transcript_with_citations(
    browser: Any, live_server: Any, tenant_factory: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 20)

    owner: Tenant = tenant_factory("Owner")
    source = {
        "resource_id": "0b6f5f7e-1d1e-4a53-9f4e-0e8e3c1b2a10",
        "resource_title": "Refund policy 2026",
        "passage_id": "passage-42",
    }
    _, messages = conversation(
        owner.workspace,
        external_user_id="alice",
        title="Refund question",
        turns=[
            (
                "How long do refunds take?",
                answer_response(("Refunds are paid within thirty days.", source), ("Anything else?", None)),
            )
        ],
    )
    feedback(messages[1], rating="up", comment="clear answer")
    User.objects.create_superuser("operator", "operator@example.org", "a-long-test-password-91")

    browser.get(f"{live_server.url}/admin/login/?next=/admin/")
    browser.find_element(By.ID, "id_username").send_keys("operator")
    browser.find_element(By.ID, "id_password").send_keys("a-long-test-password-91")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    # click() does not wait for the navigation it starts: wait for the index page.
    wait.until(ec.title_contains("Site administration"))

    browser.get(f"{live_server.url}/admin/chat/session/?q=alice")
    wait.until(ec.element_to_be_clickable((By.LINK_TEXT, "Refund question"))).click()

    transcript = wait.until(ec.presence_of_element_located((By.ID, "transcript")))
    rendered = [el.get_attribute("data-role") for el in transcript.find_elements(By.CSS_SELECTOR, "article")]
    assert rendered == ["user", "assistant"]
    text = transcript.text
    assert "How long do refunds take?" in text
    assert "Refunds are paid within thirty days." in text
    citation = transcript.find_element(By.CSS_SELECTOR, ".citation").text
    assert "Refund policy 2026" in citation and "passage-42" in citation
    assert "clear answer" in text

    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "admin-transcript.png"
    browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 0
