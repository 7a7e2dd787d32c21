"""In Chromium: try an agent, read the run record, open a long passage, open the cited document."""

from __future__ import annotations

import re

from browser_helpers import sign_in
from helpers import PASSWORD
from portal.agents.services import create_agent
from portal.documents import services as documents

RUNBOOK = """# Spool overflow runbook

## Symptoms

Output requests pile up and SP01 shows thousands of entries.

## Fix

Run the report RSPO1041 to delete old spool requests.
Then check the TemSe consistency in SP12.
"""

LONG_STEPS = "# Restart steps\n\n" + "\n".join(
    f"Step {n}: restart the application server number {n} and check the work processes." for n in range(1, 13)
) + "\n"


def _agent_with_runbooks(pack):
    documents.upload_file(pack, "spool-overflow.md", RUNBOOK.encode(), None)
    documents.upload_file(pack, "restart-steps.md", LONG_STEPS.encode(), None)
    return create_agent(None, "ops-helper", "Ops helper", "required", None, "Answer briefly.", [pack.slug])


def test_admin_tries_an_agent_and_opens_the_cited_source(page, pack, users):
    _agent_with_runbooks(pack)
    sign_in(page, users["PlatformAdmin"].email, PASSWORD)
    page.click("nav >> text=Agents")
    page.click("text=Ops helper")
    page.click("text=Try this agent")
    page.fill("#question", "How do I delete old spool requests?")
    page.click("#ask-form button[type=submit]")
    page.wait_for_selector("#run-result .run")
    assert re.search(r"/agents/ops-helper/try\?run=\d+$", page.url)  # the swap pushed the run's address
    assert page.locator("#run-result .status").inner_text() == "completed"
    marker = page.locator("#run-result .answer a.cite").first
    assert marker.inner_text() == "1"
    marker.click()
    assert page.url.endswith("#source-1")
    assert "RSPO1041" in page.locator("#source-1 .passage-text").first.inner_text()

    page.click("#source-1 >> text=Open document")
    page.wait_for_selector(".cited-passage")
    assert page.locator(".cited-passage h2").inner_text() == "Cited passage"
    cited = page.locator(".doc-body .cited")
    assert "RSPO1041" in " ".join(cited.all_inner_texts())
    assert cited.first.is_visible()


def test_long_passage_opens_with_show_full_passage(page, pack, users):
    _agent_with_runbooks(pack)
    sign_in(page, users["AgentBuilder"].email, PASSWORD)
    page.goto("/agents/ops-helper/try")
    page.fill("#question", "restart the application server")
    page.click("#ask-form button[type=submit]")
    page.wait_for_selector("#run-result .run")
    page.click("#run-result >> text=open the run record")
    source = page.locator("#source-1")
    preview, full = source.locator(".passage-preview"), source.locator(".passage-full .passage-text")
    assert preview.is_visible() and not full.is_visible()
    assert "Step 4:" in preview.inner_text() and "Step 5:" not in preview.inner_text()
    source.locator("summary", has_text="Show full passage").click()
    assert full.is_visible() and not preview.is_visible()
    assert "Step 12:" in full.inner_text()


def test_try_page_works_with_javascript_off(browser, live_server, pack, users):
    _agent_with_runbooks(pack)
    context = browser.new_context(base_url=live_server, java_script_enabled=False)
    page = context.new_page()
    sign_in(page, users["Auditor"].email, PASSWORD)
    page.goto("/agents/ops-helper/try")
    page.fill("#question", "payroll antarctica")
    page.click("#ask-form button[type=submit]")
    page.wait_for_selector("#run-result .run")
    assert "?run=" in page.url
    assert page.locator("#run-result .status").inner_text() == "stopped"
    assert "the model was not called" in page.locator("#run-result .run-meta").inner_text()
    context.close()
