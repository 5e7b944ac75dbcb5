"""The admin transcript viewer in a real browser: headless Chromium driven by
Selenium (the ``browser`` fixture, tests/browser.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest
from django.contrib.auth.models import User
from pytest_django.live_server_helper import LiveServer

from tests.browser import ARTIFACTS
from tests.conftest import Tenant
from tests.transcripts.factories import answer_response, conversation, feedback

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver


@pytest.mark.django_db(transaction=True)
def test_staff_logs_in_and_reads_a_transcript_with_citations(
    browser: WebDriver, live_server: LiveServer, tenant_factory: Callable[[str], Tenant]
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
