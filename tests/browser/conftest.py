"""A real headless Chromium for the browser tests (Debian's chromium + chromium-driver).

Skips with the reason when no browser is installed — except when MINIMODEL_REQUIRE_BROWSER=1
(set by .ci/run, which installs one), where a missing browser is a failure: CI never skips.
Screenshots go to $MINIMODEL_ARTIFACTS (default test-artifacts/) as test artefacts.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
ARTIFACTS = Path(os.environ.get("MINIMODEL_ARTIFACTS", "test-artifacts"))


def _find(names) -> str | None:
    return next((shutil.which(n) for n in names if shutil.which(n)), None)


@pytest.fixture(scope="session")
def browser():
    chromium, driver_path = _find(CHROMIUM), _find(("chromedriver",))
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        chromium = None
    if not chromium or not driver_path:
        reason = ("no headless browser: install Debian's chromium and chromium-driver and "
                  "the selenium package (pip install -e \".[test]\")")
        if os.environ.get("MINIMODEL_REQUIRE_BROWSER") == "1":
            pytest.fail(reason + " (MINIMODEL_REQUIRE_BROWSER=1)")
        pytest.skip(reason)
    options = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000", "--allow-file-access-from-files",
                # WebGL (the explorer's plots) on the CPU: Chromium no longer falls back to
                # its software renderer unless asked.
                "--enable-unsafe-swiftshader"):
        options.add_argument(arg)
    options.binary_location = chromium
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    folder = ARTIFACTS / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
