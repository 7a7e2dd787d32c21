"""Real-browser fixtures: the portal served on a loopback port, driven by Debian's Chromium."""

from __future__ import annotations

import os
import shutil

import pytest
from browser_helpers import AXE_MISSING, AXE_WATCH, axe_required, axe_source, describe
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from helpers import serve_in_thread

CHROMIUM = os.environ.get("CAIRN_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
BROWSER_WAIT_MS = 60_000
_PROVOKED_STATUS_LINES = ("Failed to load resource", "Response Status Error Code")
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


@pytest.fixture(scope="session")
def axe_script():
    """axe-core and its watcher, or None (then pages are not checked) on a developer's machine without npm."""
    source = axe_source()
    if source is None and axe_required():
        pytest.fail(AXE_MISSING, pytrace=False)
    return source and source + AXE_WATCH


@pytest.fixture
def page(browser, live_server, axe_script):
    context = browser.new_context(base_url=live_server, viewport={"width": 1280, "height": 900})
    # Every page a browser test visits, and every state an htmx swap leaves it in, is checked with axe-core
    # as the test goes: a serious or critical violation fails the test (tests/e2e/test_browser_accessibility.py
    # walks every page of every role at both widths).
    reports: list[dict] = []
    if axe_script:
        context.add_init_script(axe_script)
        context.expose_binding("cairnAxeReport", lambda source, report: reports.append(report))
    page = context.new_page()
    # Tests wait for what the page shows (expect(...), auto-waiting locators), never for a time; these
    # bounds only end a test that would otherwise hang, so they are generous for a busy CI machine.
    page.set_default_timeout(BROWSER_WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    # HTTP error statuses the test provokes on purpose (a refused upload's 422, a 503) show up as
    # "Failed to load resource" console lines, and htmx logs its own "Response Status Error Code" line for
    # a status it does not swap; script errors and other console errors fail the test.
    page.on(
        "console",
        lambda msg: (
            errors.append(msg.text) if msg.type == "error" and not msg.text.startswith(_PROVOKED_STATUS_LINES) else None
        ),
    )
    yield page
    if axe_script:
        try:  # the checks still running on the page as the test left it
            page.evaluate("() => window.cairnAxeIdle && window.cairnAxeIdle()")
        except PlaywrightError:  # the page was closed or is navigating: nothing left to wait for
            pass
    context.close()
    assert not errors, f"browser errors: {errors}"
    assert not reports, "axe found serious or critical violations:\n" + "\n".join(
        f"{report['url']} (after {report['when']})\n{describe(report['violations'])}" for report in reports
    )
