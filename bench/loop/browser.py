"""Debian's Chromium, headless, driven through Selenium: the browser the page is watched in, by its tests and its latency bench.

The driver is named outright (``/usr/bin/chromedriver``) so Selenium Manager never runs: it would
try to download a browser. A missing Chromium fails the test that asked for it, loudly.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

DESKTOP = (1280, 1200)
PHONE = (390, 844)
"""A phone held upright (CSS pixels), as the page should be legible at."""

_FLAGS = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
)


class BrowserMissing(RuntimeError):
    """Chromium or its driver is not installed (``./setup.sh`` installs both)."""


@contextmanager
def chromium(window: tuple[int, int] = DESKTOP, language: str = "en") -> Iterator[Any]:
    """A headless Chromium with a fresh profile, quit (and its profile removed) on the way out."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as exc:
        raise BrowserMissing(f"selenium is not installed ({exc}); pip install -e '.[test]'") from None
    for path in (CHROMIUM, CHROMEDRIVER):
        if not path.exists():
            raise BrowserMissing(f"{path} is missing: run ./setup.sh (apt packages chromium chromium-driver)")
    profile = tempfile.mkdtemp(prefix="hearth-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in _FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={window[0]},{window[1]}")
    options.add_argument(f"--lang={language}")
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        driver.set_window_size(*window)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_for(check: Callable[[], Any], timeout_s: float = 10.0, every_s: float = 0.05, what: str = "") -> Any:
    """Poll ``check`` (run in the test's thread) until it returns something truthy; that value.

    Raises AssertionError naming ``what`` and the last value seen when ``timeout_s`` passes.
    An element that went stale while ``check`` read it counts as "not yet": the page
    re-renders a list whenever the server pushes its state, so a row found a moment ago
    may already have been replaced by an identical one.
    """
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while True:
        try:
            last = check()
        except Exception as exc:
            if type(exc).__name__ != "StaleElementReferenceException":
                raise
            last = exc
        else:
            if last:
                return last
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_s} s for {what or check}; last saw {last!r}")
        time.sleep(every_s)


def save_screenshot(driver: Any, path: Path) -> Path:
    """The whole page as it stands, as a PNG at ``path`` (its folder made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not driver.save_screenshot(str(path)):
        raise AssertionError(f"the screenshot was not written to {path}")
    return path
