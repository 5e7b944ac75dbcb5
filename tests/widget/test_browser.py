"""<daneshyar-chat> in a real browser (headless Chromium, tests/browser.py),
embedded in an integrator's page on another origin (tests/widget/host.py),
against a live server, real PostgreSQL + pgvector, the real embedding model
and the embedded extractive engine (which asks back with a form when a
question could mean two documents).

The happy path saves a screenshot of the widget (``artifacts/`` by default;
scripts/console_screenshots writes docs/images/widget.png).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import pytest
from pytest_django import Settings
from pytest_django.live_server_helper import LiveServer

from chat.backends.scripted import ScriptedBackend
from chat.models import Message, Session
from resources.models import Resource
from tests.browser import ARTIFACTS
from tests.chat.appliances import LONG_GRINDER, QUESTION, appliance_manuals
from tests.chat.helpers import answer, ingest_text
from tests.conftest import Tenant, api_client
from tests.widget.host import host_site
from workspaces import tokens
from workspaces.models import DEFAULT_ANSWERABILITY_THRESHOLD

if TYPE_CHECKING:
    from selenium.webdriver.remote.shadowroot import ShadowRoot
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

KETTLE = "Kettle K1 manual.\n\nThe Kettle K1 comes with a two-year warranty from the date of purchase."
TOASTER = "Toaster T2 manual.\n\nThe Toaster T2 comes with a one-year warranty from the date of purchase."
USER = "acme-user-42"
# An assistant message once its answer is complete.
DONE = ".msg.assistant:not([aria-busy])"

# Records what the answer bubble showed while it was still streaming
# (aria-busy), so the test sees the answer arrive before the final event.
WATCH_STREAM = """
const root = document.querySelector("daneshyar-chat").shadowRoot;
window.streamed = [];
new MutationObserver(() => {
  const busy = root.querySelector('.msg[aria-busy="true"] .content');
  if (busy && busy.textContent) window.streamed.push(busy.textContent);
}).observe(root, {subtree: true, childList: true, characterData: true});
"""


def _wait(driver: WebDriver, timeout: float = 60) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.2)


def _shadow(driver: WebDriver) -> ShadowRoot:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.TAG_NAME, "daneshyar-chat").shadow_root


def _state(driver: WebDriver) -> str | None:
    state: str | None = driver.execute_script(
        'return document.querySelector("daneshyar-chat").getAttribute("state")'
    )
    return state


def _workspace(owner: Tenant, origins: list[str]) -> None:
    """The two manuals (a question about "the warranty" is asked back), and the allowed origins."""
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.save()
    ingest_text(owner.workspace, "Kettle K1", KETTLE)
    ingest_text(owner.workspace, "Toaster T2", TOASTER)
    _allow(owner, origins)


def _allow(owner: Tenant, origins: list[str]) -> None:
    response = api_client(owner.admin_key).patch(
        f"/api/v1/workspaces/{owner.workspace.id}/", {"allowed_origins": origins}, format="json"
    )
    assert response.status_code == 200, response.json()


def _ask(driver: WebDriver, question: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    box = _shadow(driver).find_element(By.CSS_SELECTOR, "textarea")
    box.send_keys(question)
    box.send_keys(Keys.ENTER)


def _answer_the_form(driver: WebDriver, choice: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    root = _shadow(driver)
    form = _wait(driver).until(
        lambda d: _shadow(d).find_elements(By.CSS_SELECTOR, "form.answer select:enabled")
    )
    select = form[0]
    options = Select(select).options[1:]
    assert sorted(o.text for o in options) == ["Kettle K1", "Toaster T2"]
    # Each option's value is its document's id; its text, the label.
    titles = {str(r.id): r.title for r in Resource.objects.all()}
    assert {titles[str(o.get_attribute("value"))]: o.text for o in options} == {
        "Kettle K1": "Kettle K1",
        "Toaster T2": "Toaster T2",
    }
    Select(select).select_by_visible_text(choice)
    root.find_element(By.CSS_SELECTOR, "form.answer button[type=submit]").click()


def test_an_embedded_widget_asks_answers_with_citations_and_keeps_the_session(
    browser: WebDriver, live_server: LiveServer, owner: Tenant
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    with host_site(
        service=live_server.url, workspace_id=str(owner.workspace.id), admin_key=owner.admin_key, user=USER
    ) as site:
        _workspace(owner, [site.url])
        browser.set_window_size(720, 840)  # the size of the screenshot
        browser.get(site.url + "/")
        _wait(browser).until(lambda d: _state(d) == "ready")
        browser.execute_script(WATCH_STREAM)

        _ask(browser, "How long is the warranty?")
        _answer_the_form(browser, "Toaster T2")
        # The form's answer went back as the next message, as the contract says:
        # the chosen option's value (the document's id), shown by its label.
        _wait(browser).until(lambda d: len(_shadow(d).find_elements(By.CSS_SELECTOR, DONE)) == 2)
        root = _shadow(browser)
        assert [m.text for m in root.find_elements(By.CSS_SELECTOR, ".msg.user")][1].endswith(
            "subject: Toaster T2"
        )
        toaster = Resource.objects.get(title="Toaster T2")
        sent = Message.objects.filter(role="user").order_by("sequence").values_list("content", flat=True)
        assert list(sent)[1] == f"subject: {toaster.id}"
        answer = root.find_elements(By.CSS_SELECTOR, DONE)[1]
        assert "one-year warranty" in answer.text
        assert browser.execute_script("return window.streamed.length") > 0
        assert root.find_element(By.CSS_SELECTOR, ".log").get_attribute("aria-live") == "polite"

        marker = answer.find_element(By.CSS_SELECTOR, "button.cite")
        assert marker.text == "[1]"
        marker.click()
        dialog = root.find_element(By.CSS_SELECTOR, "dialog")
        _wait(browser).until(
            lambda d: "one-year warranty" in dialog.find_element(By.CSS_SELECTOR, "blockquote").text
        )
        assert dialog.find_element(By.CSS_SELECTOR, "h3").text == "Toaster T2"
        _save_screenshot(browser)
        dialog.send_keys(Keys.ESCAPE)
        _wait(browser).until(lambda d: not dialog.get_attribute("open"))

        session = Session.objects.get(workspace=owner.workspace)
        assert session.external_user_id == USER and session.messages.count() == 4

        browser.refresh()
        _wait(browser).until(lambda d: len(_shadow(d).find_elements(By.CSS_SELECTOR, ".msg")) == 4)
        assert (
            "one-year warranty" in _shadow(browser).find_elements(By.CSS_SELECTOR, ".msg.assistant")[1].text
        )
        # Restored, the answer still shows the label it chose, not the id it sent.
        restored = _shadow(browser).find_elements(By.CSS_SELECTOR, ".msg.user")[1].text
        assert restored.endswith("subject: Toaster T2") and str(toaster.id) not in restored
        _shadow(browser).find_element(By.CSS_SELECTOR, "header button[aria-expanded]").click()
        listed = _wait(browser).until(
            lambda d: _shadow(d).find_elements(By.CSS_SELECTOR, "nav button[data-session]")
        )
        assert [b.get_attribute("data-session") for b in listed] == [str(session.id)]
        assert listed[0].get_attribute("aria-current") == "true"

        # A new conversation survives a reload too; the earlier one is a click away.
        _shadow(browser).find_element(By.CSS_SELECTOR, "header button:not([aria-expanded])").click()
        assert _shadow(browser).find_elements(By.CSS_SELECTOR, ".msg") == []
        browser.refresh()
        _wait(browser).until(lambda d: _state(d) == "ready")
        assert _shadow(browser).find_elements(By.CSS_SELECTOR, ".msg") == []
        _shadow(browser).find_element(By.CSS_SELECTOR, "header button[aria-expanded]").click()
        _wait(browser).until(lambda d: _shadow(d).find_elements(By.CSS_SELECTOR, "nav button[data-session]"))[
            0
        ].click()
        _wait(browser).until(lambda d: len(_shadow(d).find_elements(By.CSS_SELECTOR, ".msg")) == 4)
        assert site.token_requests


def test_the_widget_offers_seven_manuals_and_answers_for_a_cut_title(
    browser: WebDriver, live_server: LiveServer, owner: Tenant
) -> None:
    """Every manual is an option (the long titles cut at a word, the untitled
    one titled at ingestion); choosing a cut title sends its document's id
    and answers the warranty question from that manual only."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    manuals = appliance_manuals(owner)
    grinder = next(m for m in manuals.values() if m.title == LONG_GRINDER)
    with host_site(
        service=live_server.url, workspace_id=str(owner.workspace.id), admin_key=owner.admin_key, user=USER
    ) as site:
        _allow(owner, [site.url])
        browser.get(site.url + "/")
        _wait(browser).until(lambda d: _state(d) == "ready")
        _ask(browser, QUESTION)
        select = _wait(browser).until(
            lambda d: _shadow(d).find_elements(By.CSS_SELECTOR, "form.answer select:enabled")
        )[0]
        options = {str(o.get_attribute("value")): o.text for o in Select(select).options[1:]}
        assert set(options) == set(manuals)
        label = options[grinder.resource_id]
        assert label.endswith("\u2026") and LONG_GRINDER.startswith(label.removesuffix("\u2026"))
        Select(select).select_by_value(grinder.resource_id)
        _shadow(browser).find_element(By.CSS_SELECTOR, "form.answer button[type=submit]").click()
        _wait(browser).until(lambda d: len(_shadow(d).find_elements(By.CSS_SELECTOR, DONE)) == 2)
        root = _shadow(browser)
        assert root.find_elements(By.CSS_SELECTOR, ".msg.user")[1].text.endswith(f"subject: {label}")
        answer = root.find_elements(By.CSS_SELECTOR, DONE)[1].text
        assert grinder.sentence in answer
        assert not any(m.sentence in answer for m in manuals.values() if m is not grinder)


def _save_screenshot(driver: WebDriver) -> None:
    """The page (its window a phone-to-tablet size) with the citation's dialog open."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / "widget.png"))


def test_a_page_on_an_origin_not_allowed_is_refused_by_the_browser(
    browser: WebDriver, live_server: LiveServer, owner: Tenant
) -> None:
    from selenium.webdriver.common.by import By

    with (
        host_site(
            service=live_server.url,
            workspace_id=str(owner.workspace.id),
            admin_key=owner.admin_key,
            user=USER,
        ) as allowed,
        host_site(
            service=live_server.url,
            workspace_id=str(owner.workspace.id),
            admin_key=owner.admin_key,
            user=USER,
        ) as other,
    ):
        _workspace(owner, [allowed.url])
        browser.get(other.url + "/")
        _wait(browser).until(lambda d: _state(d) == "ready")
        _ask(browser, "How long is the warranty of the kettle?")
        _wait(browser).until(lambda d: _state(d) == "error")
        error = _shadow(browser).find_element(By.CSS_SELECTOR, "[role=alert]")
        assert "cannot be reached" in error.text
        # The preflight was refused: the question never reached the service.
        assert not Session.objects.filter(workspace=owner.workspace).exists()
        assert other.token_requests


def test_a_token_is_renewed_before_it_expires(
    browser: WebDriver, live_server: LiveServer, owner: Tenant
) -> None:
    """Announced to expire in 4 s: renewed at half its life, with no request failing first."""
    with host_site(
        service=live_server.url,
        workspace_id=str(owner.workspace.id),
        admin_key=owner.admin_key,
        user=USER,
        announce_in=4,
    ) as site:
        browser.get(site.url + "/")
        _wait(browser).until(lambda d: _state(d) == "ready")
        _wait(browser, timeout=15).until(lambda d: len(site.token_requests) >= 2)
        assert _state(browser) == "ready"


def test_an_expired_token_is_replaced_after_401_token_expired(
    browser: WebDriver, live_server: LiveServer, owner: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first token lives 1 s but is announced for a day; the question
    sent with it gets 401 token_expired, and the widget asks its provider
    function for a new token and sends the question again."""
    from selenium.webdriver.common.by import By

    # The live server runs in this process: no clock-skew leeway, so 1 s is 1 s.
    monkeypatch.setattr(tokens, "LEEWAY_SECONDS", 0)

    with host_site(
        service=live_server.url,
        workspace_id=str(owner.workspace.id),
        admin_key=owner.admin_key,
        user=USER,
        provider="function",
        ttls=(1, 600),
        announce_in=86400,
    ) as site:
        _workspace(owner, [site.url])
        browser.get(site.url + "/")
        _wait(browser).until(lambda d: _state(d) == "ready")
        time.sleep(2.5)
        _ask(browser, "How long is the warranty of the kettle?")
        answer = _wait(browser).until(lambda d: _shadow(d).find_elements(By.CSS_SELECTOR, DONE))[0]
        assert "two-year warranty" in answer.text and _state(browser) == "ready"
        assert len(site.token_requests) == 2


def test_the_demo_page_runs_the_widget_right_to_left(
    browser: WebDriver, live_server: LiveServer, owner: Tenant, settings: Settings
) -> None:
    """The demo page of `make run` (same origin, its own token view), in
    Persian: the widget's texts follow `lang` and its layout mirrors."""
    from selenium.webdriver.common.by import By

    settings.WIDGET_DEMO_WORKSPACE = str(owner.workspace.id)
    ingest_text(owner.workspace, "Kettle K1", KETTLE)
    browser.get(f"{live_server.url}/widget/demo/?lang=fa&dir=rtl")
    _wait(browser).until(lambda d: _state(d) == "ready")
    root = _shadow(browser)
    send = root.find_element(By.CSS_SELECTOR, "button[type=submit]")
    assert send.text == "ارسال"
    box = root.find_element(By.CSS_SELECTOR, "textarea")
    # Right to left: the send button sits to the left of the question box.
    assert send.rect["x"] < box.rect["x"]
    _ask(browser, "How long is the warranty of the kettle?")
    question = _wait(browser).until(lambda d: _shadow(d).find_elements(By.CSS_SELECTOR, ".msg.user"))[0]
    answer = _wait(browser).until(lambda d: _shadow(d).find_elements(By.CSS_SELECTOR, DONE))[0]
    assert "two-year warranty" in answer.text
    # Mirrored: the answer on the start side (right), the user's message on the end side (left).
    assert answer.rect["x"] + answer.rect["width"] > question.rect["x"] + question.rect["width"]
    assert question.rect["x"] < answer.rect["x"]
    # Each bubble takes its direction from its own text (dir="auto"): an
    # English message reads left to right in the right-to-left widget.
    direction = "return getComputedStyle(arguments[0]).direction"
    assert question.get_attribute("dir") == answer.get_attribute("dir") == "auto"
    assert browser.execute_script(direction, answer) == browser.execute_script(direction, question) == "ltr"
    assert browser.execute_script(direction, root.find_element(By.CSS_SELECTOR, ".log")) == "rtl"
    assert Session.objects.get(workspace=owner.workspace).external_user_id.startswith("demo-")


def _field(name: str, kind: str, required: bool, options: list[str] | None = None, **extra: Any) -> Any:
    label = name.capitalize()
    return {"name": name, "label": label, "type": kind, "required": required, "options": options, **extra}


# Every field type of the contract, as a generative model would ask.
EVERY_FIELD: dict[str, Any] = {
    "type": "form",
    "question": "A few details, please.",
    "title": "Your visit",
    "fields": [
        _field("name", "text", True, placeholder="Ada"),
        _field("notes", "textarea", False),
        _field("age", "number", True),
        _field("day", "date", True),
        _field("email", "email", False),
        _field("department", "select", True, ["Cardiology", "Neurology"]),
        _field("slot", "radio", True, ["Morning", "Afternoon"]),
        _field("topics", "checkbox", True, ["Visits", "Costs", "Parking"]),
        _field("reminder", "checkbox", False),
    ],
}


def test_every_field_type_is_a_native_control_and_the_answers_are_the_next_message(
    browser: WebDriver, live_server: LiveServer, owner: Tenant, scripted: ScriptedBackend
) -> None:
    """Generation is the scripted stand-in for a generative model (it runs in
    the live server's process): it asks with EVERY_FIELD, then answers."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    scripted.replies = [json.dumps(EVERY_FIELD), answer(("Booked.", None))]
    with host_site(
        service=live_server.url, workspace_id=str(owner.workspace.id), admin_key=owner.admin_key, user=USER
    ) as site:
        _allow(owner, [site.url])  # no documents: the model answers from general knowledge
        browser.get(site.url + "/")
        _wait(browser).until(lambda d: _state(d) == "ready")
        _ask(browser, "Book me a visit")
        _wait(browser).until(
            lambda d: _shadow(d).find_elements(By.CSS_SELECTOR, "form.answer button:enabled")
        )
        form = _shadow(browser).find_element(By.CSS_SELECTOR, "form.answer")
        controls = {
            name: form.find_elements(By.CSS_SELECTOR, f"[name={name}]")
            for name in [field["name"] for field in EVERY_FIELD["fields"]]
        }
        kinds = {
            name: [(c.tag_name, c.get_attribute("type")) for c in found] for name, found in controls.items()
        }
        assert kinds == {
            "name": [("input", "text")],
            "notes": [("textarea", "textarea")],
            "age": [("input", "number")],
            "day": [("input", "date")],
            "email": [("input", "email")],
            "department": [("select", "select-one")],
            "slot": [("input", "radio")] * 2,
            "topics": [("input", "checkbox")] * 3,
            "reminder": [("input", "checkbox")],
        }
        assert controls["name"][0].get_attribute("placeholder") == "Ada"
        assert controls["reminder"][0].get_attribute("role") == "switch"
        # Each control is labelled: by its <label>, or by its group's <legend>.
        legends = [e.text for e in form.find_elements(By.CSS_SELECTOR, "fieldset > legend")]
        assert legends == ["Slot*", "Topics*"]

        submit = form.find_element(By.CSS_SELECTOR, "button[type=submit]")
        submit.click()  # required fields empty: nothing is sent
        assert len(_shadow(browser).find_elements(By.CSS_SELECTOR, ".msg.user")) == 1
        controls["name"][0].send_keys("Ada Lovelace")
        controls["age"][0].send_keys("36")
        browser.execute_script("arguments[0].value = '2026-12-24'", controls["day"][0])
        Select(controls["department"][0]).select_by_visible_text("Neurology")
        controls["slot"][1].click()
        controls["topics"][0].click()
        controls["topics"][2].click()
        submit.click()
        _wait(browser).until(lambda d: len(_shadow(d).find_elements(By.CSS_SELECTOR, DONE)) == 2)

    asked = Message.objects.filter(session__workspace=owner.workspace, role="user")
    sent = asked.order_by("sequence").last()
    assert sent is not None and sent.content == (
        "name: Ada Lovelace\nage: 36\nday: 2026-12-24\ndepartment: Neurology\nslot: Afternoon\n"
        "topics: Visits, Parking\nreminder: no"
    )
