"""In Chromium: sign in, upload, search as you type, open the document at the passage."""

from __future__ import annotations

import re

from browser_helpers import arrived_at, sign_in
from playwright.sync_api import expect

from helpers import PASSWORD

RUNBOOK = """# Spool overflow runbook

## Symptoms

Output requests pile up and SP01 shows thousands of entries.

## Fix

Run the report RSPO1041 to delete old spool requests, then check TemSe consistency in SP12.
"""


def test_admin_uploads_searches_and_opens_the_cited_passage(page, pack, users, tmp_path):
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.click("text=Operations")
    path = tmp_path / "spool-overflow.md"
    path.write_text(RUNBOOK)
    empty = tmp_path / "empty.md"
    empty.write_text("")
    page.set_input_files("#files", [str(path), str(empty)])
    page.click("#upload-form button[type=submit]")
    expect(page.locator(".outcome.accepted")).to_have_count(1)
    expect(page.locator(".outcome.refused")).to_contain_text("no text")
    expect(page.locator("#upload-bar")).to_have_attribute("value", "100")
    expect(page.locator("#document-list").get_by_text("Spool overflow runbook")).to_have_count(1)
    expect(page.locator("#docs-heading")).to_have_text(re.compile(r"^Documents\s*\(1\)$"))  # counted again

    page.fill("#q", "RSPO1041")  # results arrive as you type, no button press
    expect(page.locator("#results .hit").first).to_be_visible()
    arrived_at(page, re.compile(r"q=RSPO1041"))
    page.click("#results .hit-title")
    expect(page.locator(".cited-passage")).to_be_visible()
    cited = page.locator(".doc-body .cited")
    assert "RSPO1041" in " ".join(cited.all_inner_texts())
    expect(cited.first).to_be_in_viewport()  # scrolled to

    page.goto("/packs/ops")
    page.fill("#q", "payroll antarctica")
    expect(page.locator("#results .no-match")).to_be_visible()


def test_pages_work_with_javascript_off(browser, live_server, pack, users):
    context = browser.new_context(base_url=live_server, java_script_enabled=False)
    page = context.new_page()
    sign_in(page, users["Auditor"].email, PASSWORD)
    page.goto("/packs/ops")
    page.fill("#q", "anything")
    page.press("#q", "Enter")
    expect(page.locator(".no-match")).to_be_visible()
    arrived_at(page, re.compile(r"/packs/ops/search\?q=anything"))
    context.close()
