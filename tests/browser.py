"""Headless Chromium driven by Selenium, for the admin console's browser tests.

Needs Debian's ``chromium`` and ``chromium-driver`` packages (/usr/bin/chromium,
/usr/bin/chromedriver) and the ``selenium`` pip package. Both paths are given
explicitly, so Selenium Manager never looks for or downloads a browser. A
test using the ``browser`` fixture is skipped only on a developer machine
without them; under CI it fails.

The ``browser`` fixture is registered in tests/conftest.py.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from django.conf import settings

from tests.parts import part_missing

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver


CHROMIUM = os.environ.get("CHROMIUM_BINARY", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER_BINARY", "/usr/bin/chromedriver")
# Screenshots of browser tests (ignored by git); scripts/console_screenshots
# points it at docs/images.
ARTIFACTS = Path(os.environ.get("SCREENSHOT_DIR") or Path(settings.BASE_DIR) / "artifacts")
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
def browser() -> Iterator[WebDriver]:
    reason = _missing()
    if reason:
        part_missing(reason)
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


def log_in(driver: WebDriver, base_url: str, username: str, password: str) -> None:
    """The admin's login form, then wait for the index page."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(f"{base_url}/admin/login/?next=/admin/")
    driver.find_element(By.ID, "id_username").send_keys(username)
    driver.find_element(By.ID, "id_password").send_keys(password)
    driver.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    # click() does not wait for the navigation it starts: wait for the index page.
    WebDriverWait(driver, 20).until(ec.title_contains("Site administration"))
