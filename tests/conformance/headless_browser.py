"""Debian's headless Chromium through chromedriver (selenium), for the HTML pages' tests.

``chromium_session`` skips loudly without Chromium, chromedriver or selenium
(``.ci/run`` installs them), opens a window 1,400 px wide with its own
profile directory, and reports the browser's console errors on request.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

WIDTH = 1400


@contextmanager
def chromium_session(profile: Path, *, height: int = 1000) -> Iterator[Any]:
    """A headless Chromium at ``WIDTH`` x ``height``; quit on exit."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        pytest.skip(
            "LOUD SKIP: Chromium or chromedriver is not installed, the HTML pages are not "
            "checked in a browser (Debian: apt-get install chromium chromium-driver)"
        )
    try:
        from selenium import webdriver  # noqa: PLC0415  (after the skip)
    except ImportError:
        pytest.skip(
            "LOUD SKIP: selenium is not installed, the HTML pages are not checked in a browser "
            "(pip install -e '.[test]')"
        )
    from selenium.webdriver.chrome.service import Service  # noqa: PLC0415  (after the skip)

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    profile.mkdir(parents=True, exist_ok=True)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    chrome = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    try:
        chrome.set_window_size(WIDTH, height)
        yield chrome
    finally:
        chrome.quit()


def console_errors(chrome: Any) -> list[dict[str, Any]]:
    """The browser's SEVERE log entries since the last call."""
    return [e for e in chrome.get_log("browser") if e.get("level") == "SEVERE"]


def page_width(chrome: Any) -> int:
    """How wide the document is: more than the window means something runs off the side."""
    return int(chrome.execute_script("return document.documentElement.scrollWidth"))
