"""In Chromium: sign in, upload, search as you type, open the document at the passage."""

from __future__ import annotations

from browser_helpers import sign_in
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
    page.wait_for_selector(".outcome.accepted")
    page.wait_for_selector(".outcome.refused")
    assert page.locator("#upload-bar").get_attribute("value") == "100"
    assert "no text" in page.locator(".outcome.refused").inner_text()
    assert page.locator("#document-list").get_by_text("Spool overflow runbook").count() == 1

    page.fill("#q", "RSPO1041")  # results arrive as you type, no button press
    page.wait_for_selector("#results .hit")
    assert "q=RSPO1041" in page.url
    page.click("#results .hit-title")
    page.wait_for_selector(".cited-passage")
    cited = page.locator(".doc-body .cited")
    assert "RSPO1041" in " ".join(cited.all_inner_texts())
    assert cited.first.is_visible()  # scrolled to

    page.goto("/packs/ops")
    page.fill("#q", "payroll antarctica")
    page.wait_for_selector("#results .no-evidence")


def test_pages_work_with_javascript_off(browser, live_server, pack, users):
    context = browser.new_context(base_url=live_server, java_script_enabled=False)
    page = context.new_page()
    sign_in(page, users["Auditor"].email, PASSWORD)
    page.goto("/packs/ops")
    page.fill("#q", "anything")
    page.press("#q", "Enter")
    page.wait_for_selector(".no-evidence")
    assert "/packs/ops/search?q=anything" in page.url
    context.close()
