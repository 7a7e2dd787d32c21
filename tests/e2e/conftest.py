"""Real-browser fixtures: the portal served on a loopback port, driven by Debian's Chromium."""

from __future__ import annotations

import os
import shutil

import pytest
from playwright.sync_api import expect

from helpers import serve_in_thread

CHROMIUM = os.environ.get("CAIRN_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
BROWSER_WAIT_MS = 60_000
expect.set_options(timeout=BROWSER_WAIT_MS)  # expect()'s own default is 5 s
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "e2e" in item.nodeid:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        message = f"Chromium not found at {CHROMIUM}: install Debian's chromium package to run browser tests"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def live_server(app):
    """Serve ``app`` from a thread on 127.0.0.1 (same process: the JVM and database are shared)."""
    app.config["WTF_CSRF_ENABLED"] = True  # the browser goes through the real forms
    yield from serve_in_thread(app)


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    # Tests wait for what the page shows (expect(...), auto-waiting locators), never for a time; these
    # bounds only end a test that would otherwise hang, so they are generous for a busy CI machine.
    page.set_default_timeout(BROWSER_WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    # HTTP error statuses the test provokes on purpose (a refused upload's 422) show up as
    # "Failed to load resource" console lines; script errors and other console errors fail the test.
    page.on(
        "console",
        lambda msg: (
            errors.append(msg.text)
            if msg.type == "error" and not msg.text.startswith("Failed to load resource")
            else None
        ),
    )
    yield page
    context.close()
    assert not errors, f"browser errors: {errors}"
