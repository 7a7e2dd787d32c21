"""In Chromium: try an agent, read the run record, open a long passage, open the cited document."""

from __future__ import annotations

import re

from browser_helpers import arrived_at, sign_in
from playwright.sync_api import expect

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

LONG_STEPS = (
    "# Restart steps\n\n"
    + "\n".join(
        f"Step {n}: restart the application server number {n} and check the work processes." for n in range(1, 13)
    )
    + "\n"
)


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
    expect(page.locator("#run-result .status")).to_have_text("completed")
    arrived_at(page, re.compile(r"/agents/ops-helper/try\?run=\d+$"))  # the swap pushed the run's address
    marker = page.locator("#run-result .answer a.cite").first
    expect(marker).to_have_text("1")
    marker.click()
    arrived_at(page, re.compile(r"#source-1$"))
    expect(page.locator("#source-1 .passage-text").first).to_contain_text("RSPO1041")

    page.click("#source-1 >> text=Open document")
    expect(page.locator(".cited-passage h2")).to_have_text("Cited passage")
    cited = page.locator(".doc-body .cited")
    assert "RSPO1041" in " ".join(cited.all_inner_texts())
    expect(cited.first).to_be_in_viewport()


def test_long_passage_opens_with_show_full_passage(page, pack, users):
    _agent_with_runbooks(pack)
    sign_in(page, users["AgentBuilder"].email, PASSWORD)
    page.goto("/agents/ops-helper/try")
    page.fill("#question", "restart the application server")
    page.click("#ask-form button[type=submit]")
    page.click("#run-result >> text=open the run record")  # the click waits for the answer to show the link
    source = page.locator("#source-1")
    preview, full = source.locator(".passage-preview"), source.locator(".passage-full .passage-text")
    expect(preview).to_be_visible()
    expect(full).to_be_hidden()
    assert "Step 5:" in preview.inner_text() and "Step 6:" not in preview.inner_text()  # the heading and 5 steps
    source.locator("summary", has_text="Show full passage").click()
    expect(full).to_be_visible()
    expect(preview).to_be_hidden()
    expect(full).to_contain_text("Step 12:")


def test_try_page_works_with_javascript_off(browser, live_server, pack, users):
    _agent_with_runbooks(pack)
    context = browser.new_context(base_url=live_server, java_script_enabled=False)
    page = context.new_page()
    sign_in(page, users["Auditor"].email, PASSWORD)
    page.goto("/agents/ops-helper/try")
    page.fill("#question", "payroll antarctica")
    page.click("#ask-form button[type=submit]")
    expect(page.locator("#run-result .status")).to_have_text("stopped")
    arrived_at(page, re.compile(r"\?run=\d+"))
    expect(page.locator("#run-result .run-meta")).to_contain_text("the model was not called")
    context.close()
