"""Headless Chromium (Debian's ``chromium`` package, driven by Playwright) for the browser
tests (the dashboard, the API docs). Without it the tests fail rather than skip, so a
missing browser cannot pass unnoticed."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A launched Playwright Chromium browser, closed after."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} not found: the browser tests need Debian's chromium package "
            "(apt-get install -y chromium)"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser tests need Playwright for Python: pip install -e '.[test]'")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
