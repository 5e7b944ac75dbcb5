"""The curation console in a real browser (headless Chromium, tests/browser.py),
against a live server, real PostgreSQL + pgvector, the real embedding model,
a real Celery worker on Redis and the embedded extractive engine.

Each test saves a screenshot of what it checked (``artifacts/`` by default;
scripts/console_screenshots writes the ones in docs/images/).
"""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from celery.worker import WorkController
from django.contrib.auth.models import User
from django.utils import timezone
from pytest_django.live_server_helper import LiveServer

from chat.models import Feedback, Message
from tests.browser import ARTIFACTS, log_in
from tests.chat.helpers import chat_data, ingest_text
from tests.conftest import Tenant
from tests.resources.files import long_text, make_zip
from tests.staff import PASSWORD, grant
from workspaces.models import StaffMembership

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.remote.webelement import WebElement

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _attribute(element: WebElement, name: str) -> str:
    value = element.get_attribute(name)
    assert value is not None, name
    return value


def _wait(driver: WebDriver, timeout: float = 30) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.2)


def _screenshot(driver: WebDriver, name: str, *, max_height: int = 1800) -> Path:
    """The page's content (the admin's navigation sidebar folded away), at
    its full height up to ``max_height``, as a PNG under ARTIFACTS."""
    width, height = driver.execute_script(
        """
        document.getElementById("main").classList.remove("shifted");
        window.scrollTo(0, 0);
        const content = document.getElementById("content");
        return [document.documentElement.clientWidth,
                Math.ceil(content.getBoundingClientRect().bottom + window.scrollY + 24)];
        """
    )
    clip = {"x": 0, "y": 0, "width": width, "height": min(int(height), max_height), "scale": 1}
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip}
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    path.write_bytes(base64.b64decode(shot["data"]))
    assert path.stat().st_size > 0
    return path


def _curator(tenant: Tenant, username: str = "curator") -> User:
    """A staff account limited to ``tenant``'s organization, with the console's permissions."""
    user = User.objects.create_user(username, f"{username}@example.org", PASSWORD, is_staff=True)
    grant(user)
    StaffMembership.objects.create(user=user, organization=tenant.organization)
    return user


def test_uploads_reach_ready_on_the_progress_view_without_a_reload(
    browser: WebDriver, live_server: LiveServer, owner: Tenant, celery_worker: WorkController, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    _curator(owner)
    files = {
        "opening-hours.md": b"# Opening hours\n\nThe front desk is open from nine to five on weekdays.",
        "parking.txt": long_text(paragraphs=3, seed="parking").encode(),
        "handbook.zip": make_zip(
            {
                "handbook/leave.txt": b"Leave is booked two weeks ahead through the front desk.",
                "handbook/expenses.md": b"# Expenses\n\nReceipts are filed within thirty days.",
            }
        ),
    }
    paths = []
    for name, data in files.items():
        path = tmp_path / name
        path.write_bytes(data)
        paths.append(str(path))

    log_in(browser, live_server.url, "curator", PASSWORD)
    browser.get(f"{live_server.url}/admin/console/{owner.workspace.id}/ingestion/")
    # Survives only if the page is never reloaded.
    browser.execute_script("window.consoleMarker = 'same page';")
    browser.find_element(By.ID, "upload-files").send_keys("\n".join(paths))
    browser.find_element(By.ID, "upload-submit").click()

    _wait(browser).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#upload-results li")) == 4)
    outcomes = [
        li.get_attribute("data-outcome")
        for li in browser.find_elements(By.CSS_SELECTOR, "#upload-results li")
    ]
    assert outcomes == ["created"] * 4

    # The status section is swapped in as it refreshes: read it in one script call.
    read_status = """
        const ready = document.querySelector('#status-counts li[data-status="ready"]');
        return {
            state: document.getElementById("progress").dataset.state,
            ready: ready ? ready.dataset.count : null,
            rows: Array.from(document.querySelectorAll("#resource-rows tbody tr[data-resource]")).map(
                (row) => [row.dataset.status, row.querySelector("td a").textContent]),
        };
    """
    _wait(browser, timeout=240).until(
        lambda d: (status := d.execute_script(read_status))["state"] == "done" and status["ready"] == "4"
    )
    status = browser.execute_script(read_status)
    assert browser.execute_script("return window.consoleMarker") == "same page"
    assert sorted(status["rows"]) == [
        ["ready", "handbook/expenses.md"],
        ["ready", "handbook/leave.txt"],
        ["ready", "opening-hours.md"],
        ["ready", "parking.txt"],
    ]


# What the status section holds, read in one script call (it is swapped in as it refreshes).
READ_ROWS = """
    return {
        state: document.getElementById("progress").dataset.state,
        rows: Object.fromEntries(
            Array.from(document.querySelectorAll("#resource-rows tbody tr[data-resource]")).map((row) => [
                row.querySelector("td a").textContent,
                [row.dataset.status, row.cells[3].textContent.trim()],
            ])
        ),
    };
"""


def test_a_failure_shows_its_reason_and_retry_queues_it_again_without_a_reload(
    browser: WebDriver, live_server: LiveServer, owner: Tenant, celery_worker: WorkController, tmp_path: Path
) -> None:
    from resources.models import Resource

    _curator(owner)
    files = {
        "faq.md": b"# FAQ\n\nThe front desk answers the phone from nine to five.",
        "minutes.txt": long_text(paragraphs=4, seed="minutes").encode(),
        "scan.pdf": b"%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage without xref",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)

    log_in(browser, live_server.url, "curator", PASSWORD)
    browser.get(f"{live_server.url}/admin/console/{owner.workspace.id}/ingestion/")
    browser.execute_script("window.consoleMarker = 'same page';")
    browser.find_element("id", "upload-files").send_keys("\n".join(str(tmp_path / name) for name in files))
    browser.find_element("id", "upload-submit").click()

    def settled(driver: WebDriver) -> dict[str, Any] | None:
        status: dict[str, Any] = driver.execute_script(READ_ROWS)
        finished = status["state"] == "done" and len(status["rows"]) == 3
        return status if finished else None

    status = _wait(browser, timeout=240).until(settled)
    assert status["rows"]["faq.md"][0] == status["rows"]["minutes.txt"][0] == "ready"
    failed, reason = status["rows"]["scan.pdf"]
    assert failed == "failed" and reason.startswith("corrupt_file")
    scan = Resource.objects.get(workspace=owner.workspace, title="scan.pdf")
    first_failure = scan.status_changed_at

    browser.execute_script('document.querySelector("tr[data-status=failed] button.retry").click()')
    _wait(browser, timeout=120).until(
        lambda d: (
            Resource.objects.get(pk=scan.pk).status_changed_at > first_failure
            and Resource.objects.get(pk=scan.pk).status == "failed"
            and (s := d.execute_script(READ_ROWS))["state"] == "done"
            and s["rows"]["scan.pdf"][0] == "failed"
        )
    )
    assert browser.execute_script("return window.consoleMarker") == "same page"
    _screenshot(browser, "console-ingestion")


def test_a_playground_question_gets_a_cited_answer_whose_citation_opens_the_passage(
    browser: WebDriver, live_server: LiveServer, owner: Tenant
) -> None:
    from selenium.webdriver.common.by import By

    _curator(owner)
    ingest_text(
        owner.workspace,
        "Refund policy",
        "Refunds are paid within thirty days of the return reaching our warehouse.\n\n"
        "A refund goes back to the card that paid for the order.\n\n"
        "Gift cards are never refunded in cash.",
    )
    ingest_text(owner.workspace, "Shipping", "Parcels ship from Rotterdam every weekday morning.")

    log_in(browser, live_server.url, "curator", PASSWORD)
    browser.get(f"{live_server.url}/admin/console/{owner.workspace.id}/playground/")
    browser.find_element(By.ID, "id_question").send_keys("How long do refunds take?")
    browser.find_element(By.ID, "ask").click()

    answer = _wait(browser, timeout=60).until(lambda d: d.find_element(By.ID, "answer"))
    citation = answer.find_element(By.CSS_SELECTOR, "a.citation")
    passage = browser.find_element(By.ID, f"passage-{citation.get_attribute('data-passage')}")
    assert passage.get_property("open") is False
    assert "thirty days" in _attribute(passage, "textContent")
    citation.click()
    _wait(browser).until(lambda d: passage.get_property("open") is True)
    assert "Refund policy" in passage.text
    marks = [m.text.lower() for m in passage.find_elements(By.TAG_NAME, "mark")]
    assert "refunds" in marks
    # The exact prompt, one toggle away.
    trace = browser.find_element(By.ID, "prompt-trace")
    trace.find_element(By.TAG_NAME, "summary").click()
    assert "How long do refunds take?" in trace.text
    trace.find_element(By.TAG_NAME, "summary").click()  # closed again for the picture
    _screenshot(browser, "console-playground")


def _rate(tenant: Tenant, turn: dict[str, Any], user: str, rating: str) -> None:
    response = tenant.client("chat").post(
        f"/api/v1/workspaces/{tenant.workspace.id}/sessions/{turn['session']['id']}/messages/"
        f"{turn['assistant_message']['id']}/feedback/",
        {"external_user_id": user, "rating": rating},
        format="json",
    )
    assert response.status_code in (200, 201), response.json()


def test_the_dashboard_draws_its_charts_from_real_turns(
    browser: WebDriver, live_server: LiveServer, owner: Tenant
) -> None:
    from selenium.webdriver.common.by import By

    _curator(owner)
    ingest_text(
        owner.workspace,
        "Refund policy",
        "Refunds are paid within thirty days.\n\nGift cards are never refunded in cash.",
    )
    ingest_text(owner.workspace, "Shipping", "Parcels ship from Rotterdam every weekday morning.")
    ingest_text(owner.workspace, "Warranty", "Appliances carry a two-year warranty on parts.")
    ingest_text(owner.workspace, "Holiday opening", "The shop closes on the first of January.")
    # (days ago, end user, question, feedback): real turns, then dated back
    # to the day they stand for, so that the month has a shape.
    questions = [
        (20, "alice", "How long do refunds take?", "up"),
        (14, "erin", "Can I return a gift card?", None),
        (9, "bob", "Where do parcels ship from?", "up"),
        (6, "alice", "Are gift cards refunded in cash?", "down"),
        (6, "frank", "Is there a warranty on parts?", "up"),
        (3, "carol", "When are refunds paid?", None),
        (2, "grace", "Do parcels ship on weekdays?", "up"),
        (1, "heidi", "How do refunds reach my card?", None),
        (0, "dave", "Do you ship on weekdays?", "down"),
        (0, "ivan", "How long is the warranty?", None),
    ]
    # One reference moment for every date: the page's window (the last 30
    # days) holds all of them even when it is drawn after midnight.
    anchor = timezone.now()
    for days_ago, user, question, rating in questions:
        turn = chat_data(owner, external_user_id=user, message=question)
        if rating:
            _rate(owner, turn, user, rating)
        moment = anchor - dt.timedelta(days=days_ago)
        Message.objects.filter(session_id=turn["session"]["id"]).update(created_at=moment)
        Feedback.objects.filter(message_id=turn["assistant_message"]["id"]).update(updated_at=moment)

    log_in(browser, live_server.url, "curator", PASSWORD)
    browser.get(f"{live_server.url}/admin/console/{owner.workspace.id}/dashboard/")

    def values(chart: str) -> dict[str, int]:
        bars = browser.find_elements(By.CSS_SELECTOR, f"#{chart} svg rect.bar")
        return {_attribute(bar, "data-label"): int(_attribute(bar, "data-value")) for bar in bars}

    turns = values("chart-turns")
    today = anchor.astimezone(dt.UTC).date()
    assert len(turns) == 30 and sum(turns.values()) == len(questions)
    assert turns[today.isoformat()] == 2 and turns[(today - dt.timedelta(days=6)).isoformat()] == 2
    assert sum(values("chart-outcomes").values()) == len(questions)
    assert values("chart-grounding")["documents"] == len(questions)
    feedback = values("chart-feedback")
    assert sum(v for k, v in feedback.items() if k.endswith(" up")) == 4
    assert sum(v for k, v in feedback.items() if k.endswith(" down")) == 2
    assert feedback[f"{today.isoformat()} down"] == 1
    cited = values("chart-cited")
    assert cited and set(cited) <= {"Refund policy", "Shipping", "Warranty", "Holiday opening"}
    # Bars are drawn: a non-zero value has a visible height.
    today_bar = browser.find_element(
        By.CSS_SELECTOR, f'#chart-turns rect.bar[data-label="{today.isoformat()}"]'
    )
    assert float(_attribute(today_bar, "height")) > 0
    review = browser.find_elements(By.CSS_SELECTOR, "#review tbody tr[data-message] a")
    assert {link.text for link in review} >= {"Are gift cards refunded in cash?", "Do you ship on weekdays?"}
    review[0].click()
    _wait(browser).until(lambda d: d.find_elements(By.ID, "transcript"))
    assert "/transcripts/" in browser.current_url and "#message-" in browser.current_url
    browser.back()
    _wait(browser).until(lambda d: d.find_elements(By.ID, "dashboard"))
    _screenshot(browser, "console-dashboard", max_height=1700)


def test_staff_limited_to_one_organization_get_404_for_anothers_pages(
    browser: WebDriver, live_server: LiveServer, tenant_factory: Callable[[str], Tenant]
) -> None:
    from selenium.webdriver.common.by import By

    mine: Tenant = tenant_factory("Organization A")
    theirs: Tenant = tenant_factory("Organization B")
    _curator(mine)
    log_in(browser, live_server.url, "curator", PASSWORD)

    for page in ("dashboard/", "playground/", "transcripts/", "ingestion/"):
        browser.get(f"{live_server.url}/admin/console/{theirs.workspace.id}/{page}")
        body = browser.find_element(By.TAG_NAME, "body").text
        assert '"code": "not_found"' in body or '"code":"not_found"' in body, (page, body[:300])
        browser.get(f"{live_server.url}/admin/console/{mine.workspace.id}/{page}")
        assert browser.find_element(By.ID, "console")
    browser.get(f"{live_server.url}/admin/console/")
    listed = browser.find_element(By.ID, "workspaces").text
    assert "Organization A" in listed and "Organization B" not in listed
